import ArgumentParser
import MoonreelEngine
import MoonreelBindings
import MoonreelStudio
#if canImport(Glibc)
import Glibc
#endif

struct StudioCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "studio",
        abstract: "Preview a script's edit live in the browser: player, timeline, effect controls; runs again on every save.",
        discussion: """
            The script runs as with `moonreel run`, except that export() writes nothing: each export \
            becomes an item on the page. The page's Export button runs the real export. Prints the \
            page's address (with a random token); Ctrl-C stops. See docs/studio.md.
            """)
    @OptionGroup var common: CommonOptions
    @OptionGroup var parameters: ParameterOptions
    @Option(help: "Address to listen on. Anything but loopback lets other machines watch and drive the studio.")
    var host = "127.0.0.1"
    @Option(help: "Port to listen on (default: a free one).") var port = 0
    @Option(help: "Preview size: WIDTHxHEIGHT box the pictures fit in (default 960x540).") var scale = "960x540"
    @Flag(help: "Open the page with xdg-open.") var open = false
    @Flag(help: "Preview from the sources only: make no proxies (see `moonreel proxy`).") var noProxies = false
    @Argument(help: "The Lua script to preview.", completion: .file(extensions: ["lua"])) var script: String
    @Argument(parsing: .captureForPassthrough, help: "Arguments for the script.") var arguments: [String] = []

    func validate() throws {
        _ = try previewSize()
        guard (0...65535).contains(port) else { throw ValidationError("--port must be 0…65535, got \(port)") }
    }

    func previewSize() throws -> (width: Int, height: Int) { try Self.previewSize(scale) }

    /// A `--scale` value: the box preview pictures fit in.
    static func previewSize(_ scale: String) throws -> (width: Int, height: Int) {
        let parts = scale.lowercased().split(separator: "x").compactMap { Int($0) }
        guard parts.count == 2, (16...7680).contains(parts[0]), (16...4320).contains(parts[1]) else {
            throw ValidationError("--scale must be WIDTHxHEIGHT (16…7680 x 16…4320), e.g. 960x540, got \(scale.quotedForMessage())")
        }
        return (parts[0], parts[1])
    }

    func run() throws {
        FFmpegLog.capture()
        var options = StudioSession.Options()
        options.arguments = arguments.first == "--" ? Array(arguments.dropFirst()) : arguments
        options.limits = common.limits
        options.effectSearchPath = .fromEnvironment()
        options.lockedEffects = EffectLock.versions(in:)
        options.previewSize = try previewSize()
        options.overwriteOutputs = common.overwrite
        options.strict = common.strict
        options.parameterValues = try parameters.values()
        if !noProxies {
            options.proxies = ProxyCache.standard(previewSize: options.previewSize)
            if options.proxies == nil { printError("moonreel: note: neither XDG_CACHE_HOME nor HOME is set: no preview proxies are made") }
        }
        if !["127.0.0.1", "::1", "localhost"].contains(host) {
            printError("moonreel: warning: listening on \(host): anyone who can reach it and learns the address can watch the preview and run its exports")
        }
        let studio: Studio
        do {
            studio = try Studio(session: StudioSession(source: .script(path: script), options: options), host: host, port: port)
        } catch {
            printError("moonreel: studio: \(error)")
            throw ExitCode(Exit.failed)
        }
        guard writeOut("moonreel studio: \(studio.server.url)\n") else { throw ExitCode(Exit.failed) }
        if open {
            var pid = pid_t()
            let argv: [UnsafeMutablePointer<CChar>?] = [strdup("xdg-open"), strdup(studio.server.url), nil]
            defer { argv.forEach { free($0) } }
            if posix_spawnp(&pid, "xdg-open", nil, nil, argv, environ) != 0 {
                printError("moonreel: note: could not run xdg-open; open \(studio.server.url) in a browser")
            }
        }
        let signals = SignalWatcher.start { studio.stop() }
        studio.server.wait()
        if signals.interrupted { throw ExitCode(Exit.interrupted) }
    }
}
