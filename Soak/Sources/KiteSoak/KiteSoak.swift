import Foundation
import Kite
import Synchronization

/// The command line: `KiteSoak --minutes 60 --warmup 10 --csv Soak/Results/soak.csv`.
struct Settings: Sendable {
    /// How long the workload runs, in samples (one a minute).
    var minutes = 60
    /// The samples before this one are the warm-up; the criterion compares the last sample with this one.
    var warmup = 10
    /// How many operations run at once.
    var workers = 12
    /// The length of a "minute" (a shorter one only to try the harness out).
    var minuteSeconds = 60
    /// The chance that an operation's task is cancelled after a random delay of up to 400 ms.
    var cancelProbability = 0.1
    /// Each worker waits a random 0...thinkMilliseconds between operations (keeps the CPU moderate).
    var thinkMilliseconds = 40
    /// The sessions' `connectionIdleTimeout`, and how long the quiet before each sample lasts (longer, so pooled
    /// idle connections have closed and every descriptor left open is one nobody uses).
    var idleTimeoutSeconds = 3
    var quietSeconds = 5
    /// An operation running longer than this is a hang.
    var hangSeconds = 120
    /// The run stops early (and fails) once resident memory passes this, so a leak cannot starve a shared machine.
    var rssCapMiB = 12288
    var csv = "soak.csv"
    var outcomes = "outcomes.csv"
    /// Only the operations whose names contain one of these (comma-separated), to find what a trend comes from.
    var only: [String] = []

    static func parse(_ arguments: [String]) throws -> Settings {
        var settings = Settings()
        var arguments = arguments[...]
        while let name = arguments.popFirst() {
            guard let value = arguments.popFirst() else { throw SoakError("\(name) needs a value") }
            func int() throws -> Int {
                guard let number = Int(value), number >= 0 else { throw SoakError("\(name) \(value): not a count") }
                return number
            }
            switch name {
            case "--minutes": settings.minutes = try int()
            case "--warmup": settings.warmup = try int()
            case "--workers": settings.workers = try int()
            case "--minute-seconds": settings.minuteSeconds = try int()
            case "--think-ms": settings.thinkMilliseconds = try int()
            case "--idle-timeout-seconds": settings.idleTimeoutSeconds = try int()
            case "--quiet-seconds": settings.quietSeconds = try int()
            case "--hang-seconds": settings.hangSeconds = try int()
            case "--rss-cap-mib": settings.rssCapMiB = try int()
            case "--cancel-probability":
                guard let chance = Double(value), (0...1).contains(chance) else { throw SoakError("\(name) \(value)") }
                settings.cancelProbability = chance
            case "--csv": settings.csv = value
            case "--outcomes": settings.outcomes = value
            case "--only": settings.only = value.split(separator: ",").map(String.init)
            default: throw SoakError("unknown option \(name)")
            }
        }
        guard settings.minutes >= 1, settings.warmup < settings.minutes, settings.workers >= 1 else {
            throw SoakError("need --minutes ≥ 1, --warmup < --minutes and --workers ≥ 1")
        }
        return settings
    }
}

/// One line of the CSV: the process after a quiet moment, and the totals so far.
struct Row: Sendable {
    var minute: Int
    var elapsedSeconds: Double
    var quiet: ProcessSample
    var busy: ProcessSample
    var totals: Tally.Totals
    var strayFiles: Int

    static let header =
        "minute,elapsed_s,rss_kib,fds,threads,cpu_s,operations,requests,responses,kite_errors,failures,retries,"
        + "busy_rss_kib,busy_fds,busy_threads,stray_files,heap_kib,heap_free_kib"

    var line: String {
        [
            "\(self.minute)", String(format: "%.1f", self.elapsedSeconds), "\(self.quiet.rssKiB)", "\(self.quiet.fds)",
            "\(self.quiet.threads)", String(format: "%.1f", self.quiet.cpuSeconds), "\(self.totals.operations)",
            "\(self.totals.requestsFinished)", "\(self.totals.responses)", "\(self.totals.kiteErrors)",
            "\(self.totals.failures)", "\(self.totals.retries)", "\(self.busy.rssKiB)", "\(self.busy.fds)",
            "\(self.busy.threads)", "\(self.strayFiles)", "\(self.quiet.heapKiB)", "\(self.quiet.heapFreeKiB)",
        ].joined(separator: ",")
    }
}

@main
struct KiteSoak {
    static func main() async {
        do {
            exit(try await self.run())
        } catch {
            FileHandle.standardError.write(Data("KiteSoak: \(error)\n".utf8))
            exit(2)
        }
    }

    static func run() async throws -> Int32 {
        let settings = try Settings.parse(Array(CommandLine.arguments.dropFirst()))
        let peers = try Peers.fromEnvironment()
        let tally = Tally()
        let monitor = ClosureEventMonitor()
        monitor.requestDidFinish = { _ in tally.requestFinished() }
        monitor.requestIsRetrying = { _ in tally.requestRetried() }
        let beforeSessions = ProcessSample.now()
        let workload = try Workload(peers: peers, idleTimeout: .seconds(settings.idleTimeoutSeconds), monitor: monitor)
        let gate = Gate()
        let inFlight = InFlight()

        guard FileManager.default.createFile(atPath: settings.csv, contents: Data((Row.header + "\n").utf8)),
            let csv = FileHandle(forWritingAtPath: settings.csv)
        else { throw SoakError("cannot write \(settings.csv)") }
        csv.seekToEndOfFile()
        func strayFiles() -> Int {
            (try? FileManager.default.contentsOfDirectory(atPath: peers.workDirectory.path))?.count ?? -1
        }
        var rows: [Row] = []
        func record(_ row: Row) {
            rows.append(row)
            csv.write(Data((row.line + "\n").utf8))
            let mib = Double(row.quiet.rssKiB) / 1024
            say(
                String(
                    format: "minute %3ld  rss %7.1f MiB  heap %6.1f MiB  fds %3ld  threads %3ld  cpu %6.1f s  "
                        + "operations %7ld  requests %7ld  KiteErrors %6ld  failures %ld  stray files %ld",
                    row.minute,
                    mib,
                    Double(row.quiet.heapKiB) / 1024,
                    row.quiet.fds,
                    row.quiet.threads,
                    row.quiet.cpuSeconds,
                    row.totals.operations,
                    row.totals.requestsFinished,
                    row.totals.kiteErrors,
                    row.totals.failures,
                    row.strayFiles
                )
            )
        }

        say(
            "KiteSoak: \(settings.minutes) × \(settings.minuteSeconds) s, warm-up \(settings.warmup), "
                + "\(settings.workers) workers, \(Workload.operations.count) operations, "
                + "random cancellation \(Int(settings.cancelProbability * 100)) %; process before sessions: "
                + "rss \(beforeSessions.rssKiB) KiB, fds \(beforeSessions.fds), threads \(beforeSessions.threads)"
        )
        say(
            "peers: httpbin \(peers.httpbin), nginx \(peers.nginx) and \(peers.nginxTLS), fault \(peers.fault), "
                + "tinyproxy \(peers.proxyHost):\(peers.proxyPort)"
        )
        say("Kite: \(ProcessInfo.processInfo.environment["SOAK_KITE_REVISION"] ?? "(revision not given)")")
        let start = ContinuousClock.now
        let zero = ProcessSample.now()
        record(
            Row(minute: 0, elapsedSeconds: 0, quiet: zero, busy: zero, totals: tally.totals, strayFiles: strayFiles())
        )

        let operations = Workload.operations.filter { operation in
            settings.only.isEmpty || settings.only.contains { operation.name.contains($0) }
        }
        guard !operations.isEmpty else { throw SoakError("--only matches no operation") }
        let totalWeight = operations.reduce(0) { $0 + $1.weight }
        let workers = Task {
            await withTaskGroup(of: Void.self) { group in
                for worker in 0..<settings.workers {
                    group.addTask {
                        while await gate.enter() {
                            var pick = Int.random(in: 0..<totalWeight)
                            let operation = operations.first { operation in
                                pick -= operation.weight
                                return pick < 0
                            }!
                            let cancelled = Double.random(in: 0..<1) < settings.cancelProbability
                            let name = cancelled ? "\(operation.name) [task cancelled at random]" : operation.name
                            inFlight.begin(worker, name)
                            let outcome: Outcome
                            if cancelled {
                                let task = Task { await operation.run(workload) }
                                let delay = Duration.milliseconds(Int.random(in: 0...400))
                                let canceller = Task {
                                    try? await Task.sleep(for: delay)
                                    if !Task.isCancelled { task.cancel() }
                                }
                                outcome = await task.value
                                canceller.cancel()
                            } else {
                                outcome = await operation.run(workload)
                            }
                            inFlight.end(worker)
                            tally.record(name, outcome)
                            await gate.leave()
                            if settings.thinkMilliseconds > 0 {
                                try? await Task.sleep(
                                    for: .milliseconds(Int.random(in: 0...settings.thinkMilliseconds))
                                )
                            }
                        }
                    }
                }
            }
        }

        var hangs: [String] = []
        var stoppedEarly: String?
        var warmDescriptors: [String] = []
        var lastDescriptors: [String] = []
        let hangBound = Duration.seconds(settings.hangSeconds)
        for minute in 1...settings.minutes {
            try? await Task.sleep(until: start + .seconds(minute * settings.minuteSeconds), clock: .continuous)
            let busy = ProcessSample.now()
            await gate.pause()
            while await gate.busy > 0 {
                let stuck = inFlight.older(than: hangBound)
                if !stuck.isEmpty {
                    for entry in stuck where !hangs.contains(entry.components(separatedBy: " running for")[0]) {
                        hangs.append(entry.components(separatedBy: " running for")[0])
                        FileHandle.standardError.write(Data("HANG \(entry)\n".utf8))
                    }
                    break
                }
                try? await Task.sleep(for: .milliseconds(50))
            }
            try? await Task.sleep(for: .seconds(settings.quietSeconds))
            var quiet = ProcessSample.trimmed()
            // A descriptor still open after the quiet time gets 10 s more to close before it counts (a leaked one
            // never does): the count is the lowest seen since the first sample, or what is left after that.
            let fewest = rows.dropFirst().map(\.quiet.fds).min() ?? quiet.fds
            for _ in 0..<10 where quiet.fds > fewest {
                try? await Task.sleep(for: .seconds(1))
                quiet = ProcessSample.trimmed()
            }
            lastDescriptors = ProcessSample.descriptorTargets(ports: peers.ports)
            if quiet.fds > fewest {
                let open = lastDescriptors.filter { $0.hasPrefix("tcp ") || $0 == "socket" }
                say("minute \(minute): \(quiet.fds) descriptors, more than the fewest (\(fewest)); sockets: \(open)")
            }
            if minute == settings.warmup { warmDescriptors = lastDescriptors }
            record(
                Row(
                    minute: minute,
                    elapsedSeconds: (ContinuousClock.now - start) / .seconds(1),
                    quiet: quiet,
                    busy: busy,
                    totals: tally.totals,
                    strayFiles: strayFiles()
                )
            )
            await gate.resume()
            if quiet.rssKiB > settings.rssCapMiB * 1024 {
                stoppedEarly =
                    "stopped after minute \(minute): resident memory passed the cap of \(settings.rssCapMiB) MiB"
                say(stoppedEarly!)
                break
            }
        }

        await gate.stop()
        let workersDone = Flag()
        Task {
            await workers.value
            workersDone.set()
        }
        for _ in 0..<600 where !workersDone.isSet {
            try? await Task.sleep(for: .milliseconds(100))
        }
        let workersStopped = workersDone.isSet
        var shutdownErrors: [String] = []
        for session in workload.sessions {
            do { try await session.shutdown() } catch { shutdownErrors.append("\(error)") }
        }
        try? await Task.sleep(for: .seconds(1))
        let afterShutdown = ProcessSample.now()
        try? csv.close()
        let strayNames = (try? FileManager.default.contentsOfDirectory(atPath: peers.workDirectory.path)) ?? []
        say(
            "Stray files in the work folder: \(strayNames.isEmpty ? "none" : strayNames.sorted().joined(separator: ", "))"
        )
        var descriptorChange = lastDescriptors
        for target in warmDescriptors {
            if let index = descriptorChange.firstIndex(of: target) { descriptorChange.remove(at: index) }
        }
        var descriptorsGone = warmDescriptors
        for target in lastDescriptors {
            if let index = descriptorsGone.firstIndex(of: target) { descriptorsGone.remove(at: index) }
        }
        say(
            "Descriptors at the last sample and not at the warm-up's: \(descriptorChange); the other way: \(descriptorsGone)"
        )
        say("Descriptors after the sessions shut down: \(ProcessSample.descriptorTargets(ports: peers.ports))")

        return Self.report(
            settings: settings,
            rows: rows,
            tally: tally,
            hangs: hangs + (workersStopped ? [] : ["the workers did not stop within 60 s of the end"]),
            stoppedEarly: stoppedEarly,
            shutdownErrors: shutdownErrors,
            beforeSessions: beforeSessions,
            afterShutdown: afterShutdown
        )
    }

    /// Prints the outcome table and the criterion, writes the outcomes CSV; the exit status.
    static func report(
        settings: Settings,
        rows: [Row],
        tally: Tally,
        hangs: [String],
        stoppedEarly: String?,
        shutdownErrors: [String],
        beforeSessions: ProcessSample,
        afterShutdown: ProcessSample
    ) -> Int32 {
        let counts = tally.counts
        let examples = tally.examples
        var outcomesCSV = "operation,outcome,count\n"
        say("\nOutcomes per operation:")
        for operation in counts.keys.sorted() {
            for (label, count) in counts[operation]!.sorted(by: { $0.key < $1.key }) {
                outcomesCSV += "\"\(operation)\",\(label),\(count)\n"
                say("  \(operation) | \(label): \(count)")
            }
        }
        try? Data(outcomesCSV.utf8).write(to: URL(fileURLWithPath: settings.outcomes))
        var byLabel: [String: Int] = [:]
        for perLabel in counts.values { for (label, count) in perLabel { byLabel[label, default: 0] += count } }
        say("\nOutcomes in all:")
        for (label, count) in byLabel.sorted(by: { $0.value > $1.value }) { say("  \(label): \(count)") }
        say("\nFirst message of each KiteError (per operation):")
        for key in examples.keys.sorted() where !key.hasSuffix("KiteError.cancelled") {
            say("  \(key): \(examples[key]!)")
        }

        let totals = tally.totals
        let warm = rows.first { $0.minute == settings.warmup } ?? rows.last!
        let last = rows.last!
        let window = rows.filter { $0.minute >= settings.warmup }
        let rssGrowth = last.quiet.rssKiB - warm.quiet.rssKiB
        let heapGrowth = last.quiet.heapKiB - warm.quiet.heapKiB
        let fdGrowth = last.quiet.fds - warm.quiet.fds
        let rssRange = window.map(\.quiet.rssKiB).max()! - window.map(\.quiet.rssKiB).min()!
        let fdRange = window.map(\.quiet.fds).max()! - window.map(\.quiet.fds).min()!
        let threadRange = window.map(\.quiet.threads).max()! - window.map(\.quiet.threads).min()!
        let memoryFlat = rssGrowth < 8 * 1024
        let descriptorsFlat = fdGrowth == 0
        let noStrayFiles = last.strayFiles == 0
        say(
            """

            Totals: \(totals.operations) operations, \(totals.requestsFinished) requests finished \
            (\(totals.retries) retries), \(totals.responses) responses, \(totals.kiteErrors) KiteErrors, \
            \(totals.failures) failures
            After warm-up (minute \(settings.warmup) to minute \(last.minute)):
              RSS growth \(rssGrowth) KiB (\(String(format: "%.2f", Double(rssGrowth) / 1024)) MiB; \
            limit < 8 MiB), max−min \(rssRange) KiB: \(memoryFlat ? "flat" : "NOT flat")
              live heap growth \(heapGrowth) KiB (\(warm.quiet.heapKiB) → \(last.quiet.heapKiB) KiB in use; \
            the allocator kept \(last.quiet.heapFreeKiB) KiB free at the end)
              fd growth \(fdGrowth) (limit 0), max−min \(fdRange): \(descriptorsFlat ? "flat" : "NOT flat")
              threads max−min \(threadRange); stray files at the end \(last.strayFiles)
            Before the sessions: rss \(beforeSessions.rssKiB) KiB, fds \(beforeSessions.fds), \
            threads \(beforeSessions.threads); after shutting them down: rss \(afterShutdown.rssKiB) KiB, \
            fds \(afterShutdown.fds), threads \(afterShutdown.threads)
            """
        )
        for failure in tally.failures { say("FAILURE \(failure)") }
        for hang in hangs { say("HANG \(hang)") }
        for error in shutdownErrors { say("SHUTDOWN \(error)") }
        if let stoppedEarly { say("STOPPED EARLY: \(stoppedEarly)") }
        let passed =
            memoryFlat && descriptorsFlat && noStrayFiles && totals.failures == 0 && hangs.isEmpty
            && shutdownErrors.isEmpty && stoppedEarly == nil
        say(
            passed
                ? "PASS: memory and descriptors flat, every operation ended with a response or a KiteError"
                : "FAIL"
        )
        return passed ? 0 : 1
    }
}

/// Set once, read from anywhere.
final class Flag: Sendable {
    private let value = Atomic(false)

    func set() { self.value.store(true, ordering: .sequentiallyConsistent) }

    var isSet: Bool { self.value.load(ordering: .sequentiallyConsistent) }
}

/// Writes a line to standard output at once (print's buffer would hold it back when the output is a pipe).
func say(_ line: String) {
    FileHandle.standardOutput.write(Data((line + "\n").utf8))
}
