import Foundation
import Synchronization
import MoonreelBindings
import Testing
import TestSupport

/// The host API an app embeds (issue 13): app functions with Swift types, print and export
/// callbacks, cancelling from another thread, typed errors, several hosts at once.
@Suite struct EmbeddingTests {
    /// Exports seconds 0–2 of `arg[1]` to `arg[2]` with a text layer over it.
    static let captionedCut = """
        local asset = av.asset(arg[1])
        local comp = av.composition()
        comp:insertTimeRange(av.range(0, tonumber(arg[3] or 2)), asset, 0)
        local vc = av.videoComposition(comp)
        local full = { 0, 0, vc.renderSize.width, vc.renderSize.height }
        local parent, video = av.layer{ frame = full }, av.layer{ frame = full }
        parent:addSublayer(video)
        parent:addSublayer(av.textLayer{ string = caption(), fontSize = 40, frame = { 0, 0, full[3], 60 },
                                         foregroundColor = "white" })
        vc.animationTool = av.animationTool{ videoLayer = video, parentLayer = parent }
        local session = av.exportSession(comp, "MediumQuality")
        session.outputURL = arg[2]
        session.videoComposition = vc
        assert(session:export())
        """

    /// `RunLimits.seconds` counts exports (as its documentation says): an export running
    /// past it is cancelled, no temporary file stays, and the run throws; a run's timer that
    /// fires after the run ended cancels nothing.
    @Test func theTimeLimitStopsAnExportInAnEmbeddingApp() throws {
        let clip = try Fixtures.clip(seconds: 30, size: "1280x720", name: "long-720p.mp4")
        let folder = (Fixtures.scratchPath("x") as NSString).deletingLastPathComponent
        let host = try MoonreelHost(limits: ScriptLimits(script: RunLimits(seconds: 1)))
        let started = Date()
        #expect(throws: ScriptError.self) {
            try host.run(source: """
                local session = av.exportSession(av.asset(arg[1]), "HighestQuality")
                session.outputURL = arg[2]
                assert(session:export())
                """, name: "slow.lua", arguments: [clip, folder + "/slow.mp4"])
        }
        #expect(Date().timeIntervalSince(started) < 4)
        #expect(host.ranOutOfTime)
        #expect(try FileManager.default.contentsOfDirectory(atPath: folder).isEmpty)
        usleep(300_000)
        let quick = try host.run(source: "local t = os.clock() while os.clock() - t < 0.2 do end return 'done'", name: "quick.lua")
        #expect(quick == [.string("done")] && !host.ranOutOfTime)
        // That run's timer fires while no run is going (1.1 s after it began): the next run
        // must not find itself cancelled.
        usleep(1_000_000)
        let next = try host.run(source: "local t = os.clock() while os.clock() - t < 0.2 do end return 'next'", name: "next.lua")
        #expect(next == [.string("next")] && !host.ranOutOfTime)
    }

    @Test func appFunctionsTakeAndGiveSwiftValues() throws {
        let host = try MoonreelHost()
        var notes: [String] = []
        try host.register("notify") { (message: String, level: Int?) in notes.append("\(level ?? 0) \(message)") }
        try host.register("slug") { (title: String) -> String in title.lowercased().replacingOccurrences(of: " ", with: "-") }
        try host.register("sum") { (values: [Double]) -> Double in values.reduce(0, +) }
        try host.register("describe") { (options: [String: ScriptValue]) -> [String] in options.keys.sorted() }
        try host.register("app", value: ["name": "Lyric Studio", "build": "42"])
        var printed: [String] = []
        host.onPrint = { printed.append($0) }
        try host.run(source: """
            notify("hello", 2)
            notify("no level")
            print(slug("My Song Title"), sum({1, 2, 3.5}), table.concat(describe{ b = 1, a = { 1 } }, ","))
            print(app.name, app.build)
            """, name: "app.lua")
        #expect(notes == ["2 hello", "0 no level"])
        #expect(printed == ["my-song-title\t6.5\ta,b", "Lyric Studio\t42"])
    }

    @Test func whatTheScriptReturnsComesBackAsPlainValues() throws {
        let host = try MoonreelHost()
        let results = try host.run(source: """
            local outputs = { "a.mp4", "b.mp4" }
            return { files = outputs, count = #outputs }, 2.5, nil, print, av.layer{}, { f = print }
            """, name: "job.lua")
        #expect(results == [.table(["files": .array([.string("a.mp4"), .string("b.mp4")]), "count": .integer(2)]),
                            .number(2.5), .nil, .nil, .nil, .nil])
        #expect(try host.run(source: "local x = 1") == [])
        // Floats stay floats; a key with a NUL survives both ways.
        #expect(try host.run(source: "return 2.0, 3, { ['a\\0b'] = 1 }") == [.number(2), .integer(3), .table(["a\u{0}b": .integer(1)])])
        try host.register("echo") { (value: ScriptValue) -> ScriptValue in value }
        #expect(try host.run(source: "local t = echo({ ['x\\0y'] = 2.0 }); return t['x\\0y'], math.type(t['x\\0y'])")
                == [.number(2), .string("float")])
    }

    /// A table that holds another twice at each of forty levels stands for 2⁴⁰ values: reading
    /// it (in Swift, where no script limit runs) stops at a budget instead of running away.
    @Test func aValueThatExpandsWithoutBoundIsRefused() throws {
        let host = try MoonreelHost()
        try host.register("count") { (value: ScriptValue) -> Int in 0 }
        let error = try #require(throws: ScriptError.self) {
            try host.run(source: "local t = {} for i = 1, 40 do t = { t, t } end\ncount(t)", name: "big.lua")
        }
        #expect(error.message.hasPrefix("big.lua:2: bad argument #1 to 'count' (more than 1048576 values in one value)"), "\(error.message)")
        // A value too deep to give to scripts is refused when registered, the stack left as it was.
        var deep = ScriptValue.integer(1)
        for _ in 0..<200 { deep = .array([deep]) }
        let refused = try #require(throws: RegistrationError.self) { try host.register("deep", value: deep) }
        #expect(refused.name == "deep")
        #expect(try host.run(source: "return deep, 1") == [.nil, .integer(1)])
    }

    @Test func printWorksInCoroutinesAndThroughTostring() throws {
        let host = try MoonreelHost()
        var printed: [String] = []
        host.onPrint = { printed.append($0) }
        try host.run(source: """
            print("top", 1, nil, 2.5)
            coroutine.wrap(function(a) print("in a coroutine", a) end)("arg")
            print(setmetatable({}, { __tostring = function() return "custom" end }))
            """)
        #expect(printed == ["top\t1\tnil\t2.5", "in a coroutine\targ", "custom"])
    }

    @Test func badArgumentsAndThrownErrorsNameTheScriptLine() throws {
        struct Refused: Error, CustomStringConvertible { var description: String { "the server refused the upload" } }
        let host = try MoonreelHost()
        try host.register("upload") { (path: String) in throw Refused() }
        try host.register("count") { (items: [String]) -> Int in items.count }

        let cases: [(String, String)] = [
            ("upload(42)", "job.lua:2: bad argument #1 to 'upload' (string expected, got number)"),
            ("upload()", "job.lua:2: bad argument #1 to 'upload' (string expected, got no value)"),
            ("count({1, 2})", "job.lua:2: bad argument #1 to 'count' (array of string expected, got table)"),
            ("count(print)", "job.lua:2: bad argument #1 to 'count' (plain values expected (nil, boolean, number, string, table), got function)"),
            ("local t = {}; t[1] = t; count(t)", "job.lua:2: bad argument #1 to 'count' (tables nested more than 100 deep (does a table hold itself?))"),
            ("upload('clip.mp4')", "job.lua:2: the server refused the upload"),
        ]
        for (line, message) in cases {
            let error = try #require(throws: ScriptError.self) { try host.run(source: "local x = 1\n" + line, name: "job.lua") }
            #expect(error.message == message)
            #expect(error.kind == .runtime)
            #expect(error.file == "job.lua" && error.line == 2)
        }
        let syntax = try #require(throws: ScriptError.self) { try host.run(source: "x = = 1", name: "broken.lua") }
        #expect(syntax.kind == .syntax && syntax.file == "broken.lua" && syntax.line == 1)
        let missing = try #require(throws: ScriptError.self) { try host.run(file: "/nonexistent/job.lua") }
        #expect(missing.kind == .file)
    }

    @Test func registeringRefusesTakenAndInvalidNames() throws {
        let host = try MoonreelHost()
        for name in ["print", "av", "require", "end", "2fast", "a.b", ""] {
            let error = try #require(throws: RegistrationError.self) { try host.register(name) { () in } }
            #expect(error.name == name)
        }
        try host.register("fresh") { () -> Bool in true }
        let taken = try #require(throws: RegistrationError.self) { try host.register("fresh", value: 1) }
        #expect(taken.description == "cannot register \"fresh\": scripts already have a global of that name")
    }

    @Test func effectsNeverSeeAppFunctions() throws {
        let folder = Fixtures.scratchPath("project")
        try FileManager.default.createDirectory(atPath: folder + "/effects", withIntermediateDirectories: true)
        try """
            return { name = "Peek", version = "1", parameters = {},
                     apply = function() return tostring(rawget(_G, "secret")) end }
            """.write(toFile: folder + "/effects/peek.lua", atomically: true, encoding: .utf8)
        try "print(require('effects.peek')())".write(toFile: folder + "/main.lua", atomically: true, encoding: .utf8)
        let host = try MoonreelHost()
        try host.register("secret") { () -> String in "app data" }
        var printed: [String] = []
        host.onPrint = { printed.append($0) }
        try host.run(file: folder + "/main.lua")
        #expect(printed == ["nil"])
    }

    /// An uncaught engine failure tells the app its kind and subject (issue 22 §4); an error
    /// the script raised itself has none.
    @Test func uncaughtFailuresTellTheAppTheirKind() throws {
        let host = try MoonreelHost()
        let missing = try #require(throws: ScriptError.self) { try host.run(source: "av.asset('/no/such.mp4')", name: "open.lua") }
        #expect(missing.failureKind == "notFound" && missing.subject == "/no/such.mp4", "\(missing)")
        #expect(missing.message == "open.lua:1: bad argument #1 to 'asset' (input \"/no/such.mp4\": no such file)")
        let truncated = Fixtures.real("19_truncated_inside_moov.mp4")
        let broken = try #require(throws: ScriptError.self) { try host.run(source: "av.asset(...)", arguments: [truncated]) }
        #expect(broken.failureKind == "decode" && broken.subject == truncated, "\(broken)")
        let own = try #require(throws: ScriptError.self) { try host.run(source: "error('mine')") }
        #expect(own.failureKind == nil && own.subject == nil && own.kind == .runtime)
        let rethrown = try #require(throws: ScriptError.self) {
            try host.run(source: "local ok, err = pcall(av.range, 0/0, 1); error(err, 0)")
        }
        #expect(rethrown.failureKind == "invalidArgument", "\(rethrown)")
    }

    /// An effect's failure reaches its caller with its kind: in the script (`err.kind`) and,
    /// uncaught, in the app's ScriptError (issue 22 §4: errors from effects lost it).
    @Test func anEffectsFailureKeepsItsKindInTheCaller() throws {
        let folder = Fixtures.scratchPath("project")
        try FileManager.default.createDirectory(atPath: folder + "/effects", withIntermediateDirectories: true)
        try """
            return { name = "Broken", version = "1", parameters = {},
                     apply = function() return av.range(0/0, 1) end }
            """.write(toFile: folder + "/effects/broken.lua", atomically: true, encoding: .utf8)
        try """
            local broken = require("effects.broken")
            local ok, err = pcall(broken)
            print(ok, err.kind, err)
            broken()
            """.write(toFile: folder + "/main.lua", atomically: true, encoding: .utf8)
        let host = try MoonreelHost()
        var printed: [String] = []
        host.onPrint = { printed.append($0) }
        let error = try #require(throws: ScriptError.self) { try host.run(file: folder + "/main.lua") }
        #expect(printed == ["false\tinvalidArgument\teffects/broken.lua:2: bad argument #1 to 'range' (time must be a finite number of seconds, got nan)"],
                "\(printed)")
        #expect(error.failureKind == "invalidArgument", "\(error)")
        #expect(error.message == "effects/broken.lua:2: bad argument #1 to 'range' (time must be a finite number of seconds, got nan)", "\(error)")
    }

    @Test func exportProgressArrivesInOrder() throws {
        let clip = try Fixtures.clip(seconds: 3)
        let output = Fixtures.scratchPath("captioned.mp4")
        let host = try MoonreelHost()
        try host.register("caption") { () -> String in "Embedded" }
        var updates: [ExportUpdate] = []
        host.onExport = { updates.append($0) }
        try host.run(source: Self.captionedCut, name: "cut.lua", arguments: [clip, output])

        #expect(updates.first?.phase == .started && updates.first?.frameCount == 60)
        #expect(updates.last?.phase == .finished && updates.last?.fraction == 1 && updates.last?.framesWritten == 60)
        #expect(updates.allSatisfy { $0.output == output })
        let fractions = updates.map(\.fraction)
        #expect(fractions == fractions.sorted())
        let probe = try Tool.ffprobe(output)
        #expect(probe.video?.nb_read_frames == "60")
    }

    @Test func cancelFromAnotherThreadStopsTheExportAndTheHostRunsAgain() throws {
        let clip = try Fixtures.clip(seconds: 6)
        let folder = Fixtures.scratchPath("cancel")
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        let host = try MoonreelHost()
        try host.register("caption") { () -> String in "Cancelled" }
        let canceller = host.canceller
        let exporting = DispatchSemaphore(value: 0)
        var signalled = false
        host.onExport = { update in
            if update.phase == .progress, update.framesWritten > 10, !signalled {
                signalled = true
                exporting.signal()
            }
        }
        let watcher = Thread {
            _ = exporting.wait(timeout: .now() + 120)
            canceller.cancel()
        }
        watcher.start()
        let error = try #require(throws: ScriptError.self) {
            try host.run(source: Self.captionedCut, name: "cut.lua", arguments: [clip, folder + "/out.mp4", "6"])
        }
        #expect(error.stop == .interrupted)
        #expect(try FileManager.default.contentsOfDirectory(atPath: folder).isEmpty, "no output and no temp file left")

        host.onExport = nil
        try host.run(source: Self.captionedCut, name: "cut.lua", arguments: [clip, folder + "/again.mp4"])
        #expect(try Tool.ffprobe(folder + "/again.mp4").video?.nb_read_frames == "60")
    }

    @Test func aCancellerOutlivesItsHost() throws {
        var canceller: ScriptCanceller?
        weak var released: MoonreelHost?
        do {
            let host = try MoonreelHost()
            try host.register("notify") { (message: String) in _ = message }
            host.onPrint = { _ in }
            try host.run(source: "notify('x'); print('y')")
            canceller = host.canceller
            released = host
        }
        #expect(released == nil, "the host (its Lua state, bindings and callbacks) is freed once the app lets go")
        canceller?.cancel()
    }

    /// One host per job, jobs on threads of their own: the outputs are each job's own.
    @Test func hostsRunConcurrently() throws {
        let clip = try Fixtures.clip(seconds: 3)
        let outputs = (0..<3).map { Fixtures.scratchPath("job\($0).mp4") }
        let failures = Mutex<[String]>([])
        DispatchQueue.concurrentPerform(iterations: outputs.count) { job in
            do {
                let host = try MoonreelHost()
                try host.register("caption") { () -> String in String(repeating: "W", count: 3 + 4 * job) }
                try host.register("job", value: job)
                try host.run(source: "assert(job == \(job))\n" + Self.captionedCut, name: "job\(job).lua",
                             arguments: [clip, outputs[job]])
            } catch {
                failures.withLock { $0.append("job \(job): \(error)") }
            }
        }
        #expect(failures.withLock { $0 } == [])
        var frames: [Image] = []
        for output in outputs {
            #expect(try Tool.ffprobe(output).video?.nb_read_frames == "60")
            frames.append(try Tool.rgbFrame(output, at: 1))
        }
        // Each job drew its own caption (3, 7, 11 W's) along the bottom of the same picture:
        // the bottom strips differ, the rest of the frame does not.
        func strip(_ frame: Image, bottom: Bool) -> Image { frame.crop(x: 0, y: bottom ? 180 : 0, width: 320, height: 60) }
        for (a, b) in [(0, 1), (1, 2)] {
            let captions = strip(frames[a], bottom: true).meanDifference(strip(frames[b], bottom: true))
            let picture = strip(frames[a], bottom: false).meanDifference(strip(frames[b], bottom: false))
            #expect(captions > 4 * picture, "caption strips \(captions), top strips \(picture)")
        }
    }
}
