/// The fixed documents the test server serves.
enum StaticContent {
    /// `/html`: a page with an excerpt of Herman Melville's Moby-Dick, as httpbin serves.
    static let mobyDickPage = """
        <!DOCTYPE html>
        <html>
          <head>
          </head>
          <body>
              <h1>Herman Melville - Moby-Dick</h1>

              <div>
                <p>
                  Availing himself of the mild, summer-cool weather that now reigned in these latitudes, and in
                  preparation for the peculiarly active pursuits shortly to be anticipated, Perth, the begrimed,
                  blistered old blacksmith, had not removed his portable forge to the hold again, after concluding his
                  contributory work for Ahab's leg, but still retained it on deck, fast lashed to ringbolts by the
                  foremast; being now almost incessantly invoked by the headsmen, and harpooneers, and bowsmen to do
                  some little job for them; altering, or repairing, or new shaping their various weapons and boat
                  furniture. Often he would be surrounded by an eager circle, all waiting to be served; holding boat-
                  spades, pike-heads, harpoons, and lances, and jealously watching his every sooty movement, as he
                  toiled. Nevertheless, this old man's was a patient hammer wielded by a patient arm. No murmur, no
                  impatience, no petulance did come from him. Silent, slow, and solemn; bowing over still further his
                  chronically broken back, he toiled away, as if toil were life itself, and the heavy beating of his
                  hammer the heavy beating of his heart. And so it was.—Most miserable! A peculiar walk in this old
                  man, a certain slight but painful appearing yawing in his gait, had at an early period of the voyage
                  excited the curiosity of the mariners. And to the importunity of their persisted questionings he had
                  finally given in; and so it came to pass that every one now knew the shameful story of his wretched
                  fate. Belated, and not innocently, one bitter winter's midnight, on the road running between two
                  country towns, the blacksmith half-stupidly felt the deadly numbness stealing over him, and sought
                  refuge in a leaning, dilapidated barn. The issue was, the loss of the extremities of both feet. Out
                  of this revelation, part by part, at last came out the four acts of the gladness, and the one long,
                  and as yet uncatastrophied fifth act of the grief of his life's drama. He was an old man, who, at
                  the age of nearly sixty, had postponedly encountered that thing in sorrow's technicals called ruin.
                  He had been an artisan of famed excellence, and with plenty to do; owned a house and garden;
                  embraced a youthful, daughter-like, loving wife, and three blithe, ruddy children; every Sunday went
                  to a cheerful-looking church, planted in a grove. But one night, under cover of darkness, and
                  further concealed in a most cunning disguisement, a desperate burglar slid into his happy home, and
                  robbed them all of everything. And darker yet to tell, the blacksmith himself did ignorantly conduct
                  this burglar into his family's heart. It was the Bottle Conjuror! Upon the opening of that fatal
                  cork, forth flew the fiend, and shrivelled up his home. Now, for prudent, most wise, and economic
                  reasons, the blacksmith's shop was in the basement of his dwelling, but with a separate entrance to
                  it; so that always had the young and loving healthy wife listened with no unhappy nervousness, but
                  with vigorous pleasure, to the stout ringing of her young-armed old husband's hammer; whose
                  reverberations, muffled by passing through the floors and walls, came up to her, not unsweetly, in
                  her nursery; and so, to stout Labor's iron lullaby, the blacksmith's infants were rocked to slumber.
                  Oh, woe on woe! Oh, Death, why canst thou not sometimes be timely? Hadst thou taken this old
                  blacksmith to thyself ere his full ruin came upon him, then had the young widow had a delicious
                  grief, and her orphans a truly venerable, legendary sire to dream of in their after years; and all
                  of them a care-killing competency.
                </p>
              </div>
          </body>
        </html>
        """

    /// `/encoding/utf8`: an HTML page of UTF-8 text in many scripts.
    static let utf8Demo = """
        <!DOCTYPE html>
        <html>
          <head>
            <meta charset="utf-8">
            <title>Unicode Demo</title>
          </head>
          <body>
            <h1>Unicode Demo</h1>
            <pre>
        English: The quick brown fox jumps over the lazy dog.
        Greek: Ξεσκεπάζω τὴν ψυχοφθόρα βδελυγμία.
        Russian: Съешь же ещё этих мягких французских булок, да выпей чаю.
        Chinese: 我能吞下玻璃而不伤身体。
        Japanese: いろはにほへと ちりぬるを
        Korean: 다람쥐 헌 쳇바퀴에 타고파
        Arabic: أنا قادر على أكل الزجاج و هذا لا يؤلمني.
        Hebrew: אני יכול לאכול זכוכית וזה לא מזיק לי.
        Hindi: मैं काँच खा सकता हूँ और मुझे उससे कोई चोट नहीं पहुंचती.
        Mathematics: ∮ E⋅da = Q, n → ∞, ∑ f(i) = ∏ g(i), ∀x∈ℝ: ⌈x⌉ = −⌊−x⌋
        Emoji: 🪁 🚀 🌍 ✨ 👩‍💻
            </pre>
          </body>
        </html>

        """

    /// `/json`: httpbin's sample slideshow.
    static let slideshowJSON: JSONValue = [
        "slideshow": [
            "author": "Yours Truly",
            "date": "date of publication",
            "slides": [
                ["title": "Wake up to WonderWidgets!", "type": "all"],
                [
                    "items": ["Why <em>WonderWidgets</em> are great", "Who <em>buys</em> WonderWidgets"],
                    "title": "Overview",
                    "type": "all",
                ],
            ],
            "title": "Sample Slide Show",
        ]
    ]

    /// `/xml`: httpbin's sample slideshow as XML.
    static let slideshowXML = """
        <?xml version='1.0' encoding='us-ascii'?>

        <!--  A SAMPLE set of slides  -->

        <slideshow
            title="Sample Slide Show"
            date="Date of publication"
            author="Yours Truly"
            >

            <!-- TITLE SLIDE -->
            <slide type="all">
              <title>Wake up to WonderWidgets!</title>
            </slide>

            <!-- OVERVIEW -->
            <slide type="all">
                <title>Overview</title>
                <item>Why <em>WonderWidgets</em> are great</item>
                <item/>
                <item>Who <em>buys</em> WonderWidgets</item>
            </slide>

        </slideshow>
        """

    /// `/deny`: the page httpbin shows robots that ignore `/robots.txt`.
    static let denyPage = #"""

                  .-''''''-.
                .' _      _ '.
               /   O      O   \
              :                :
              |                |
              :       __       :
               \  .-"`  `"-.  /
                '.          .'
                  '-......-'
             YOU SHOULDN'T BE HERE

        """#

    /// `/image/png`: a 16x16 PNG of a red kite on a sky-blue background.
    static let pngImage: [UInt8] = [
        0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A, 0x00, 0x00, 0x00, 0x0D,
        0x49, 0x48, 0x44, 0x52, 0x00, 0x00, 0x00, 0x10, 0x00, 0x00, 0x00, 0x10,
        0x08, 0x02, 0x00, 0x00, 0x00, 0x90, 0x91, 0x68, 0x36, 0x00, 0x00, 0x00,
        0x4C, 0x49, 0x44, 0x41, 0x54, 0x78, 0xDA, 0x63, 0x68, 0x3F, 0xF7, 0x9A,
        0x24, 0xC4, 0x80, 0x55, 0xF4, 0x8E, 0x8D, 0x06, 0x10, 0x11, 0xAB, 0x01,
        0xA2, 0x1A, 0x97, 0x1E, 0x06, 0x3C, 0xAA, 0xB1, 0xEA, 0x61, 0xC0, 0xAF,
        0x1A, 0x53, 0x0F, 0x03, 0x41, 0xD5, 0x68, 0x7A, 0x18, 0x88, 0x51, 0x8D,
        0xAC, 0x87, 0x81, 0x48, 0xD5, 0x70, 0x3D, 0x64, 0x69, 0x20, 0xD9, 0x49,
        0xE4, 0x78, 0x9A, 0x9C, 0x60, 0x25, 0x27, 0xE2, 0xC8, 0x49, 0x1A, 0xE4,
        0x24, 0x3E, 0xFC, 0x08, 0x00, 0xC3, 0x2A, 0xD0, 0x10, 0xB9, 0xBE, 0xC7,
        0x34, 0x00, 0x00, 0x00, 0x00, 0x49, 0x45, 0x4E, 0x44, 0xAE, 0x42, 0x60,
        0x82,
    ]
}
