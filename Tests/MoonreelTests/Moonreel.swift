import Foundation
import TestSupport

/// Runs the built `moonreel` executable (it sits beside the test bundle in the build folder).
enum Moonreel {
    static let executable: String = {
        var url = URL(fileURLWithPath: CommandLine.arguments[0]).resolvingSymlinksInPath()
        while url.path != "/" {
            url.deleteLastPathComponent()
            let candidate = url.appendingPathComponent("moonreel").path
            if FileManager.default.isExecutableFile(atPath: candidate) { return candidate }
        }
        return "moonreel"
    }()

    static let checkout: String = {
        var url = URL(fileURLWithPath: #filePath)
        for _ in 0..<3 { url.deleteLastPathComponent() }
        return url.path
    }()

    static func example(_ name: String) -> String { checkout + "/scripts/examples/" + name }

    /// Exports a whole asset: `arg[1]` source, `arg[2]` output, `arg[3]` preset and, if
    /// given, `arg[4]` the session's `hdr` mode.
    static let exportWholeAssetScript = wholeAssetComposition() + """
        local session = av.exportSession(comp, arg[3])
        session.outputURL = arg[2]
        if arg[4] then session.hdr = arg[4] end
        local ok, err = session:export()
        if not ok then error(err, 0) end
        """

    /// Lua lines: `asset` opened from `arg[argument]` and `comp`, a composition of all of it.
    static func wholeAssetComposition(argument: Int = 1) -> String {
        """
        local asset = av.asset(arg[\(argument)])
        local comp = av.composition()
        comp:insertTimeRange(av.range(0, asset.durationTime), asset, 0)

        """
    }

    /// Lua lines: exports `comp` through the video composition `vc` with `preset` (a Lua
    /// expression) to `arg[output]`, raising the export's message on failure.
    static func exportThroughVideoComposition(preset: String = "\"HighestQuality\"", output: Int = 2) -> String {
        """
        local session = av.exportSession(comp, \(preset))
        session.outputURL = arg[\(output)]
        session.videoComposition = vc
        local ok, err = session:export()
        if not ok then error(err, 0) end

        """
    }

    /// Exports `av.range(start, duration)` of `arg[1]` to `arg[2]` with `preset`, asserting
    /// success (Lua lines to build test scripts from).
    static func cutScript(start: Double, duration: Double, preset: String) -> String {
        """
        local asset = av.asset(arg[1])
        local comp = av.composition()
        comp:insertTimeRange(av.range(\(start), \(duration)), asset, 0)
        local session = av.exportSession(comp, "\(preset)")
        session.outputURL = arg[2]
        assert(session:export())

        """
    }

    /// Exports all of `clip` (`width`×`height`) through an animation tool whose root `parent`
    /// (the frame's size, with the video layer in it) gets what `lines` add; returns the output.
    static func exportWithLayers(_ clip: String, width: Int, height: Int, _ lines: String) throws -> (output: String, result: Result) {
        let output = Fixtures.scratchPath("layers.mp4")
        let result = try runScript(wholeAssetComposition() + """
            local vc = av.videoComposition(comp)
            local parent, video = av.layer{ frame = { 0, 0, \(width), \(height) } }, av.layer{ frame = { 0, 0, \(width), \(height) } }
            parent:addSublayer(video)
            \(lines)
            vc.animationTool = av.animationTool{ videoLayer = video, parentLayer = parent }
            """ + exportThroughVideoComposition(), arguments: [clip, output])
        return (output, result)
    }

    struct Result {
        let status: Int32
        let out: String
        let err: String
        /// Standard error without blank lines (messages must be one line).
        var errorLines: [String] { err.split(separator: "\n").map(String.init).filter { !$0.trimmingCharacters(in: .whitespaces).isEmpty } }
    }

    @discardableResult
    static func run(_ arguments: [String], timeout: Double = 300) throws -> Result {
        let result = try Tool.run(executable, arguments, timeout: timeout)
        return Result(status: result.status, out: result.out, err: result.err)
    }

    /// Writes a Lua script to a scratch file (or to `name` when it is an absolute path) and
    /// runs it with `moonreel run`.
    @discardableResult
    static func runScript(_ source: String, name: String = "test.lua", arguments: [String] = [], options: [String] = []) throws -> Result {
        let path = name.hasPrefix("/") ? name : Fixtures.scratchPath(name)
        try source.write(toFile: path, atomically: true, encoding: .utf8)
        return try run(["run"] + options + [path] + arguments)
    }
}
