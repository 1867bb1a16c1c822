import ArgumentParser
import MoonreelEngine
import MoonreelFarm
import MoonreelInterchange
import MoonreelScriptHost
import MoonreelBindings
import MoonreelPlatform
import MoonreelREPL
#if canImport(Glibc)
import Glibc
#endif

/// Exit codes (ARCHITECTURE.md): 0 ok · 1 script or export failed · 2 usage · 130 interrupted.
enum Exit {
    static let ok: Int32 = 0
    static let failed: Int32 = 1
    static let usage: Int32 = 2
    static let interrupted: Int32 = 130
}

struct Moonreel: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "moonreel",
        abstract: "Edit video with Lua scripts, the way AVFoundation code does.",
        version: moonreelVersion,
        subcommands: [Run.self, Repl.self, StudioCommand.self, Batch.self, Info.self, Cues.self, Demo.self, Probe.self, Snapshot.self, Record.self, Effects.self, Docs.self, ProxyCommand.self,
                      CheckRows.self])
}

struct CommonOptions: ParsableArguments {
    @Flag(help: "Replace existing output files (only once the new file is complete).")
    var overwrite = false
    @Flag(help: "Print nothing but errors.")
    var quiet = false
    @Option(help: "Progress display: bar, json or none (default: bar on a terminal, else none).")
    var progress: ProgressStyle?
    @Option(help: "Memory limit in MiB: the script's Lua heap and objects, and as much again for each export's pictures and encoders.")
    var memoryLimit: Int = 2048
    @Option(help: "Stop the script after this many seconds.")
    var timeLimit: Double?
    @Flag(help: "Make every warning an error: text cut to fit, sound left out, a cue never shown… fail the export before its file is written (docs/diagnostics.md).")
    var strict = false

    var limits: ScriptLimits { ScriptLimits(memory: memoryLimit << 20, script: RunLimits(seconds: timeLimit)) }

    /// The options a batch's rows and a chunked run's tasks get from this command.
    var runOptions: RunOptions { RunOptions(memoryLimit: memoryLimit, timeLimit: timeLimit, overwrite: overwrite, strict: strict) }

    func validate() throws {
        if let timeLimit, !(timeLimit.isFinite && timeLimit > 0 && timeLimit <= 1e9) {
            throw ValidationError("--time-limit must be a number of seconds above 0 (up to 1e9), got \(timeLimit)")
        }
        guard memoryLimit >= 1, memoryLimit <= 1 << 20 else {
            throw ValidationError("--memory-limit must be 1…1048576 MiB, got \(memoryLimit)")
        }
    }

    func progressStyle() -> ProgressStyle {
        if quiet { return .none }
        return progress ?? (isatty(STDERR_FILENO) != 0 ? .bar : .none)
    }
}

/// `--set NAME=VALUE`: the script's own parameters (`av.parameters`).
struct ParameterOptions: ParsableArguments {
    @Option(name: .customLong("set"), help: ArgumentHelp("A parameter the script declares with av.parameters (repeatable).", valueName: "NAME=VALUE"))
    var assignments: [String] = []

    func validate() throws { _ = try values() }

    func values() throws -> [String: String] {
        var values: [String: String] = [:]
        for assignment in assignments {
            guard let equals = assignment.firstIndex(of: "="), equals != assignment.startIndex else {
                throw ValidationError("--set needs NAME=VALUE, got \(assignment.quotedForMessage())")
            }
            let name = String(assignment[..<equals])
            guard values[name] == nil else { throw ValidationError("--set \(name) is given twice") }
            values[name] = String(assignment[assignment.index(after: equals)...])
        }
        return values
    }
}

struct Run: ParsableCommand {
    static let configuration = CommandConfiguration(abstract: "Run a script; arguments reach it as `arg` (arg[0] = SCRIPT).")
    @OptionGroup var common: CommonOptions
    @OptionGroup var parameters: ParameterOptions
    @Flag(help: "Check every export (settings, output path, composition) and print what it would write, without writing it; a constant-quality size is measured by encoding a few short samples of the pictures.")
    var dryRun = false
    @Flag(help: "With --dry-run: estimate sizes from the settings alone, encoding no sample (faster, rougher).")
    var roughEstimate = false
    @Option(help: ArgumentHelp("Write each export's timeline (.otio, .fcpxml or .edl) instead of rendering it; a second export writes PATH with -2 before the extension, and so on (docs/interchange.md).", valueName: "PATH"))
    var timeline: String?
    @OptionGroup var chunking: ChunkOptions
    @Argument(help: "The Lua script to run.", completion: .file(extensions: ["lua"])) var script: String
    @Argument(parsing: .captureForPassthrough, help: "Arguments for the script.") var arguments: [String] = []

    func run() throws {
        var arguments = arguments
        // `--` before the script's arguments says they are the script's, whatever they look like.
        if arguments.first == "--" {
            arguments.removeFirst()
        } else if !common.quiet, let misplaced = arguments.first(where: Self.looksLikeOurs) {
            printError("moonreel: note: \(misplaced) comes after the script, so the script gets it in arg; "
                       + "moonreel's options go before it (moonreel run \(misplaced) SCRIPT …), or write -- to silence this")
        }
        var session = ScriptSession(common, dryRun: dryRun)
        session.roughEstimate = roughEstimate
        session.parameterValues = try parameters.values()
        if let timeline {
            guard TimelineFormat(path: timeline) != nil else { throw ValidationError("--timeline \(timeline.quotedForMessage()): name a .otio, .fcpxml or .edl file") }
            guard !dryRun, chunking.chunks == nil else { throw ValidationError("--timeline writes timelines instead of exports: it does not go with --dry-run or --chunks") }
            session.timelineOutput = timeline
        }
        if chunking.chunks != nil, !dryRun {
            let chunked = ChunkedRun(options: chunking, common: common, script: script, arguments: arguments, parameterValues: session.parameterValues)
            session.chunkTask = try chunked.task()
            if session.chunkTask == nil { return try chunked.run() }
        }
        try session.run(script: script, arguments: arguments)
    }

    static func looksLikeOurs(_ argument: String) -> Bool {
        ["--overwrite", "--quiet", "--progress", "--memory-limit", "--time-limit", "--dry-run", "--rough-estimate", "--timeline", "--set", "--chunks", "--slurm", "--jobs", "--strict"].contains { argument == $0 || argument.hasPrefix($0 + "=") }
    }
}

struct Demo: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Make a test clip with FFmpeg's generators and run the bundled demo script on it.")
    @OptionGroup var common: CommonOptions
    @Option(help: "Folder for the demo's files.") var output: String = "moonreel-demo"

    func run() throws {
        do { try Paths.makeFolders(output) } catch {
            printError("moonreel: demo: \(error)")
            throw ExitCode(Exit.failed)
        }
        let clip = output + "/test-pattern.mp4"
        if !common.quiet { printError("moonreel: making \(clip) (colour bars, moving counter, 440 Hz tone)") }
        do {
            try TestPattern.write(to: clip, seconds: 8, width: 1280, height: 720)
        } catch {
            printError("moonreel: \(error)")
            throw ExitCode(Exit.failed)
        }
        try ScriptSession(common).runBundled(BundledScripts.demo, name: "demo.lua", arguments: [clip, output])
    }
}

struct Docs: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Print the av API reference (Markdown, as docs/api.md), made from the bindings themselves.")

    func run() throws {
        let host = try MoonreelHost()
        print(APIReference.markdown(host.api), terminator: "")
    }
}

struct Probe: ParsableCommand {
    static let configuration = CommandConfiguration(abstract: "Show what the engine sees in a media file.")
    @Argument(help: "A media file.", completion: .file()) var file: String
    @Flag(help: "Print JSON.") var json = false

    func run() throws {
        FFmpegLog.capture()
        do {
            let asset = try Asset(path: file)
            print(json ? ProbeReport.json(asset) : ProbeReport.text(asset))
        } catch {
            printError("moonreel: \(error)")
            throw ExitCode(Exit.failed)
        }
    }
}

struct Snapshot: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Write frames of a media file as PNG, JPEG or WebP, upright, exactly at their times.",
        discussion: """
            One frame: --at 62.5 (or a timecode: 1:02.5, 00:01:02.5). A contact sheet: --count 12 spreads 12 \
            frames evenly over the video, --every 10 takes one every 10 s from the start; --grid 4x3 lays them \
            out (default: a near-square grid), each tile with its time, gaps between. A sheet's size is \
            --sheet-width (the whole sheet) or --width (each tile; 320 by default); one frame's is --width.
            """)
    @Argument(help: "A media file.", completion: .file()) var file: String
    @Option(help: "Time of the frame: seconds or [[hh:]mm:]ss[.ff].") var at: String?
    @Option(help: "A contact sheet of this many frames, spread evenly over the video.") var count: Int?
    @Option(help: "A contact sheet of a frame every this many seconds from the start.") var every: String?
    @Option(help: "Columns x rows of the contact sheet, e.g. 4x3 (default: near square).") var grid: String?
    @Option(help: "Width in pixels (scaled down, aspect kept): the frame's, or each tile's of a sheet.") var width: Int?
    @Option(help: "Width in pixels of the whole contact sheet (tiles, gaps and all).") var sheetWidth: Int?
    @Option(name: .shortAndLong, help: "Image file to write (.png, .jpg or .webp).") var output: String = "frame.png"
    @Flag(help: "Replace the image file if it exists.") var overwrite = false

    func validate() throws {
        let sheets = [every, count.map(String.init)].compactMap { $0 }.count
        guard (at == nil) != (sheets == 0), sheets <= 1 else {
            throw ValidationError("give one of --at (one frame), --count N or --every SECONDS (a contact sheet)")
        }
        if at != nil, grid != nil || sheetWidth != nil { throw ValidationError("--grid and --sheet-width are for contact sheets (--count or --every)") }
        if let count, !(1...400).contains(count) { throw ValidationError("--count must be 1…400 frames, got \(count)") }
        if width != nil, sheetWidth != nil { throw ValidationError("give --width (each tile) or --sheet-width (the whole sheet), not both") }
        if let width, !(16...16384).contains(width) { throw ValidationError("--width must be 16…16384 pixels, got \(width)") }
        if let sheetWidth, !(64...16384).contains(sheetWidth) { throw ValidationError("--sheet-width must be 64…16384 pixels, got \(sheetWidth)") }
    }

    /// The times of a contact sheet's frames: `count` spread evenly (each at the middle of
    /// its share of the video, so neither the black first frame nor the last is favoured), or
    /// one every `every` from the start; at most `limit`.
    static func sheetTimes(duration: MediaTime, count: Int?, every: MediaTime?, limit: Int) -> [MediaTime] {
        if let count {
            let shares = min(count, limit)
            return (0..<shares).compactMap { MediaTime(seconds: duration.seconds * (Double($0) + 0.5) / Double(shares)) }
        }
        guard let every else { return [] }
        var times: [MediaTime] = [], time = MediaTime.zero
        while time < duration, times.count < limit {
            times.append(time)
            time = time + every
        }
        return times
    }

    /// Seconds or a timecode, as an exact time.
    static func time(_ text: String, option: String) throws -> MediaTime {
        guard let time = Double(text).flatMap({ MediaTime(seconds: $0) }) ?? CueReader.parseTime(text), time >= .zero else {
            throw ValidationError("\(option) must be seconds or a timecode like 1:02.5, got \(text.quotedForMessage())")
        }
        return time
    }

    func run() throws {
        FFmpegLog.capture()
        let grid = try self.grid.map { text -> (columns: Int, rows: Int) in
            let parts = text.lowercased().split(separator: "x").compactMap { Int($0) }
            guard parts.count == 2, (1...20).contains(parts[0]), (1...20).contains(parts[1]) else {
                throw ValidationError("--grid must be COLUMNSxROWS (1…20 each), e.g. 4x3, got \(text.quotedForMessage())")
            }
            return (parts[0], parts[1])
        }
        let step = try every.map { text -> MediaTime in
            let step = try Self.time(text, option: "--every")
            guard step > .zero else { throw ValidationError("--every must be above 0") }
            return step
        }
        let at = try self.at.map { try Self.time($0, option: "--at") }
        do {
            let asset = try Asset(path: file)
            let composition = Composition()
            try composition.insertTimeRange(TimeRange(start: .zero, duration: asset.duration), of: asset, at: .zero)
            guard !composition.tracks(withMediaType: .video).isEmpty else { throw EngineError("input \"\(file)\" has no video track", kind: .notFound) }
            let generator = ImageGenerator(composition: composition)
            generator.overwrite = overwrite
            let readFiles = InputRegistry()
            readFiles.record(file)
            if let at {
                if let width {
                    let image = try generator.image(at: at, width: width)
                    try ImageGenerator.write(image, to: output, overwrite: overwrite, readFiles: readFiles)
                    print("\(output) (\(image.width)×\(image.height), \(at.seconds) s)")
                } else {
                    let size = try generator.copyImage(at: at, to: output)
                    print("\(output) (\(size.width)×\(size.height), \(at.seconds) s)")
                }
            } else {
                let times = Self.sheetTimes(duration: composition.duration, count: count, every: step, limit: grid.map { $0.columns * $0.rows } ?? 400)
                let columns = grid?.columns ?? Int(Double(times.count).squareRoot().rounded(.up))
                let gap = 8
                // --sheet-width: the tiles share what the gaps leave.
                let tileWidth = sheetWidth.map { max(16, ($0 - gap * (min(columns, times.count) + 1)) / min(columns, times.count)) } ?? width ?? 320
                let tiles = try times.map { try generator.image(at: $0, width: tileWidth) }
                let image = try ContactSheet.make(tiles, labels: times.map(CueCheck.clock), columns: columns, gap: gap, width: sheetWidth)
                try ImageGenerator.write(image, to: output, overwrite: overwrite, readFiles: readFiles)
                let spacing = step.map { "every \($0.seconds) s" } ?? "spread over \(CueCheck.clock(composition.duration))"
                print("\(output) (\(image.width)×\(image.height), \(tiles.count) frames \(spacing))")
            }
        } catch {
            printError("moonreel: \(error)")
            throw ExitCode(Exit.failed)
        }
    }
}

/// Writes to standard error without going through C's shared FILE* (not Sendable).
func printError(_ message: String, newline: Bool = true) {
    var text = newline ? message + "\n" : message
    text.withUTF8 { bytes in _ = write(STDERR_FILENO, bytes.baseAddress, bytes.count) }
}

// ArgumentParser reports usage errors with its own exit code (64); ours is 2.
FFmpegLog.capture()
TerminationDeadline.ignoreSignalsThatKill()
do {
    var command = try Moonreel.parseAsRoot()
    try command.run()
    exit(Exit.ok)
} catch {
    let code = Moonreel.exitCode(for: error)
    if code == .success || error is CleanExit {
        Moonreel.exit(withError: error)
    }
    if let exitCode = error as? ExitCode { exit(exitCode.rawValue) }
    if code == .validationFailure || error is ValidationError {
        printError(Moonreel.fullMessage(for: error) + "\n", newline: false)
        exit(Exit.usage)
    }
    printError(Moonreel.fullMessage(for: error) + "\n", newline: false)
    exit(Exit.failed)
}
