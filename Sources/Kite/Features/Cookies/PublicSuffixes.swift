/// The public suffixes a cookie's `Domain` attribute may not name (RFC 6265bis §5.7).
///
/// A cookie set with `Domain=co.uk` would be sent to every site under `co.uk`, so a `Domain` attribute
/// that is a public suffix is refused, unless it is the request's own host, when the cookie becomes
/// host-only. The list is small and built in:
///
/// - every single-label name (`com`, `uk`, `dev`, `localhost`, and any top-level domain added later),
/// - the common multi-label suffixes in ``multiLabel``: the registry second levels of the larger country
///   domains (`co.uk`, `com.au`, `co.jp`, `com.br`, …) and the shared hosting domains whose subdomains
///   belong to different people (`github.io`, `herokuapp.com`, `s3.amazonaws.com`, …), each one an entry
///   of the Public Suffix List.
///
/// It is **not** the full Public Suffix List (about 10,000 rules, with wildcards and exceptions, changed
/// every week): no Swift package ships that list for Linux (the package mirrors checked for this were
/// async-http-client, Hummingbird, Vapor, swift-nio and the rest of this project's mirror set; none
/// has one), and a copy built into a library goes stale. A suffix missing here, such as `*.ck` or a
/// hosting domain not in the list, lets a site set a cookie for its siblings under that suffix; a
/// client that talks to such hosts can set its own `Cookie` header instead. Debian's `publicsuffix`
/// package installs the full list as `/usr/share/publicsuffix/public_suffix_list.dat`, which a later
/// version could load.
enum PublicSuffixes {
    /// Whether `domain` (lower-case, without a leading or trailing dot) is a public suffix.
    static func contains(_ domain: String) -> Bool {
        guard !domain.isEmpty else { return false }
        return !domain.contains(".") || Self.multiLabel.contains(domain)
    }

    /// The multi-label public suffixes Kite knows, all taken from the Public Suffix List.
    static let multiLabel: Set<String> = [
        // United Kingdom
        "ac.uk", "co.uk", "gov.uk", "ltd.uk", "me.uk", "net.uk", "nhs.uk", "org.uk", "plc.uk", "police.uk",
        // Australia
        "asn.au", "com.au", "edu.au", "gov.au", "id.au", "net.au", "org.au",
        // Japan
        "ac.jp", "ad.jp", "co.jp", "ed.jp", "go.jp", "gr.jp", "lg.jp", "ne.jp", "or.jp",
        // New Zealand
        "ac.nz", "co.nz", "geek.nz", "gen.nz", "govt.nz", "kiwi.nz", "maori.nz", "net.nz", "org.nz", "school.nz",
        // Brazil
        "art.br", "blog.br", "com.br", "edu.br", "gov.br", "net.br", "org.br",
        // China
        "ac.cn", "com.cn", "edu.cn", "gov.cn", "net.cn", "org.cn",
        // India
        "ac.in", "co.in", "edu.in", "firm.in", "gen.in", "gov.in", "ind.in", "net.in", "org.in", "res.in",
        // South Africa
        "ac.za", "co.za", "gov.za", "net.za", "org.za", "web.za",
        // South Korea
        "ac.kr", "co.kr", "go.kr", "ne.kr", "or.kr", "re.kr",
        // Mexico, Argentina, Colombia, Peru
        "com.mx", "edu.mx", "gob.mx", "net.mx", "org.mx",
        "com.ar", "edu.ar", "gob.ar", "net.ar", "org.ar",
        "com.co", "edu.co", "gov.co", "net.co", "org.co",
        "com.pe", "gob.pe", "org.pe",
        // Turkey, Israel, Egypt, Saudi Arabia
        "com.tr", "edu.tr", "gov.tr", "net.tr", "org.tr",
        "ac.il", "co.il", "gov.il", "net.il", "org.il",
        "com.eg", "edu.eg", "gov.eg", "org.eg",
        "com.sa", "edu.sa", "gov.sa", "net.sa", "org.sa",
        // East and South-East Asia, Pakistan
        "com.tw", "edu.tw", "gov.tw", "net.tw", "org.tw",
        "com.hk", "edu.hk", "gov.hk", "net.hk", "org.hk",
        "com.sg", "edu.sg", "gov.sg", "net.sg", "org.sg",
        "com.my", "edu.my", "gov.my", "net.my", "org.my",
        "ac.id", "co.id", "go.id", "or.id", "web.id",
        "ac.th", "co.th", "go.th", "in.th", "or.th",
        "com.vn", "edu.vn", "gov.vn", "net.vn", "org.vn",
        "com.ph", "edu.ph", "gov.ph", "net.ph", "org.ph",
        "com.pk", "edu.pk", "gov.pk", "net.pk", "org.pk",
        // Africa
        "ac.ke", "co.ke", "go.ke", "or.ke",
        "com.ng", "edu.ng", "gov.ng", "org.ng",
        // Europe
        "ac.at", "co.at", "gv.at", "or.at",
        "com.es", "edu.es", "gob.es", "nom.es", "org.es",
        "com.pt", "edu.pt", "gov.pt", "org.pt",
        "com.gr", "edu.gr", "gov.gr", "org.gr",
        "com.pl", "gov.pl", "net.pl", "org.pl",
        "com.ua", "edu.ua", "gov.ua", "net.ua", "org.ua",
        "asso.fr", "com.fr", "gouv.fr", "nom.fr",
        // Canada's provinces
        "ab.ca", "bc.ca", "gc.ca", "on.ca", "qc.ca",
        // Shared hosting: each subdomain belongs to a different customer
        "amplifyapp.com", "appspot.com", "azurewebsites.net", "bitbucket.io", "blob.core.windows.net",
        "blogspot.com", "cloudapp.net", "cloudfront.net", "codeberg.page", "duckdns.org", "dyndns.org",
        "elasticbeanstalk.com", "firebaseapp.com", "fly.dev", "github.io", "githubusercontent.com", "gitlab.io",
        "glitch.me", "herokuapp.com", "myshopify.com", "netlify.app", "ngrok-free.app", "ngrok.io", "now.sh",
        "onrender.com", "pages.dev", "pythonanywhere.com", "readthedocs.io", "repl.co", "s3.amazonaws.com",
        "surge.sh", "trycloudflare.com", "vercel.app", "web.app", "webflow.io", "workers.dev",
    ]
}
