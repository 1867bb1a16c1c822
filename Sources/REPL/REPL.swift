import MoonreelEngine
import MoonreelScriptHost
import MoonreelBindings
import CMoonLua
import CMoonLuaShim
#if canImport(Glibc)
import Glibc
#endif
import MoonreelPlatform

/// What a REPL session needs from its embedder (the `moonreel repl` command).
package struct REPLOptions {
    package var limits: ScriptLimits
    package var searchPath: EffectSearchPath
    /// Where the line history is kept between runs (nil: no history file).
    package var historyPath: String?
    /// The text `:probe FILE` prints (the CLI's probe report), or throws.
    package var probe: (String) throws -> String
    /// Called on every host the session makes (at start and on `:reset`): exports' overwrite
    /// rule, warnings, progress display.
    package var configureHost: (MoonreelHost) -> Void
    /// Shows the current composition (through the current video composition) in the studio,
    /// starting it the first time; returns the page's address. Nil: `:studio` is unavailable.
    package var showInStudio: ((Composition, VideoComposition?) throws -> String)?

    package init(limits: ScriptLimits = ScriptLimits(), searchPath: EffectSearchPath = .fromEnvironment(),
                historyPath: String? = REPL.defaultHistoryPath, probe: @escaping (String) throws -> String,
                configureHost: @escaping (MoonreelHost) -> Void = { _ in }) {
        self.limits = limits
        self.searchPath = searchPath
        self.historyPath = historyPath
        self.probe = probe
        self.configureHost = configureHost
    }
}

/// An interactive Lua session with the `av` API (REPL.md): line editing and history on a
/// terminal, plain lines from a pipe; statements that continue while incomplete;
/// expressions printed as `lua.c` prints them; `help()`; `:` commands; Ctrl-C stops the
/// running statement and returns to the prompt.
///
/// The *current composition* (for `:snapshot`) is the Composition most recently assigned
/// to a global variable, noticed after each statement (`comp` wins when one statement
/// assigns several); if that global no longer holds a Composition, the global `comp` is
/// used when it holds one.
package final class REPL {
    private let options: REPLOptions
    private let signals: REPLSignals
    private var host: MoonreelHost
    private lazy var reader: REPLLineReader = makeReader()
    /// Globals holding compositions and video compositions (by class name), and the current one of each.
    private var compositionGlobals: [String: [String: UnsafeRawPointer]] = [:]
    private var current: [String: String] = [:]
    private var snapshotCount = 0
    /// Whether `:studio` is on: every statement then updates the page.
    private var studioShown = false
    /// The statements that ran without an error, in order, for `:save`.
    private var accepted: [String] = []
    /// Whether any statement failed (a piped session then exits with 1).
    private var failed = false

    private static let chunkName = "=stdin"
    private static let formatterKey = "moonreel.repl.format"

    /// `$XDG_DATA_HOME/moonreel/history`, default `~/.local/share/moonreel/history`.
    package static var defaultHistoryPath: String? {
        let dataHome = FileSystem.environment("XDG_DATA_HOME") ?? FileSystem.environment("HOME").map { $0 + "/.local/share" }
        return dataHome.map { $0 + "/moonreel/history" }
    }

    /// Starts the signal thread first, so every thread the engine starts later leaves
    /// Ctrl-C to it.
    package init(options: REPLOptions) throws {
        self.options = options
        signals = REPLSignals()
        host = try MoonreelHost(limits: options.limits, effectSearchPath: options.searchPath)
        try prepare(host)
    }

    /// libedit on a terminal; plain lines otherwise (a pipe, a file, or output redirected).
    private func makeReader() -> REPLLineReader {
        guard isatty(STDIN_FILENO) != 0 && isatty(STDOUT_FILENO) != 0 else { return PipedLineReader(signals: signals) }
        if let historyPath = options.historyPath { try? Paths.makeFolders(Paths.parent(of: historyPath)) }
        return TerminalLineReader(signals: signals, historyPath: options.historyPath) { [unowned self] word in
            REPLCatalog(host: host).completions(for: word)
        }
    }

    /// Runs `script` (if any, with `arguments` as its `arg`), then reads statements until
    /// Ctrl-D, `:quit` or SIGTERM. Returns the exit code: 0; 1 when input came from a pipe and
    /// a statement failed (so a piped session fails as a script would); 130 after SIGTERM.
    package func run(script: String? = nil, arguments: [String] = []) -> Int32 {
        if reader is TerminalLineReader {
            writeREPLOutput("Moonreel \(moonreelVersion) (Lua 5.4) · help() lists the API, :help the commands, Ctrl-D leaves\n")
        }
        if let script {
            runStatement { try host.scripts.runScript(atPath: script, arguments: arguments) }
        }
        let failureStatus: Int32 = reader is TerminalLineReader ? 0 : 1
        while !signals.terminated {
            switch reader.read(prompt: "> ") {
            case .end:
                return failed ? failureStatus : 0
            case .interrupted:
                continue
            case .line(let line) where isCommand(line):
                reader.remember(line)
                if !runCommand(line) { return failed ? failureStatus : 0 }
            case .line(let line):
                if let statement = readStatement(startingWith: line) { reader.remember(statement) }
            }
        }
        return 130
    }

    // MARK: Statements

    private enum Compiled {
        case ready, incomplete, failed(ScriptError)
    }

    /// Reads continuation lines while the statement is incomplete, then runs it. Returns the
    /// text for the history (nil when Ctrl-C dropped it).
    private func readStatement(startingWith line: String) -> String? {
        var statement = line
        let L = host.lua.L
        let base = lua_gettop(L)
        defer { lua_settop(L, base) }
        while true {
            switch compile(statement) {
            case .ready:
                if runCompiledStatement() { accepted.append(statement) }
                return statement
            case .failed(let error):
                report(error.message)
                return statement
            case .incomplete:
                switch reader.read(prompt: ">> ") {
                case .line(let more): statement += "\n" + more
                case .interrupted: return nil
                case .end:
                    if case .failed(let error) = compile(statement + "\n") { report(error.message) }
                    return statement
                }
            }
        }
    }

    /// Compiles as an expression first (`return ...`, as lua.c 5.4 does), then as a
    /// statement; leaves the function on the stack when ready. Incomplete when Lua's error
    /// is at the end of the input ("near <eof>") for either form, so "1 +" continues too.
    private func compile(_ statement: String) -> Compiled {
        var incomplete = false
        do {
            try host.lua.load("return " + statement, chunkName: REPL.chunkName)
            return .ready
        } catch let error as ScriptError {
            incomplete = error.message.hasSuffix("<eof>")
        } catch {}
        do {
            try host.lua.load(statement, chunkName: REPL.chunkName)
            return .ready
        } catch let error as ScriptError {
            return incomplete || error.message.hasSuffix("<eof>") ? .incomplete : .failed(error)
        } catch {
            return .failed(ScriptError(kind: .runtime, message: "\(error)"))
        }
    }

    /// Calls the compiled function on top of the stack and prints what it returned; false
    /// when it failed.
    private func runCompiledStatement() -> Bool {
        let lua = host.lua
        return runStatement {
            let count = try lua.withRunLimits(host.scripts.limits.script) { try lua.call(argumentCount: 0) }
            guard count > 0 else { return }
            // stack: results… → format(results…) → text
            lua_getfield(lua.L, MOON_LUA_REGISTRYINDEX, REPL.formatterKey)
            moon_insert(lua.L, -count - 1)
            try lua.withRunLimits(host.scripts.limits.script) { try lua.call(argumentCount: count, resultCount: 1) }
            writeREPLOutput(LuaState.string(lua.L, at: -1) + "\n")
        }
    }

    /// Runs one unit of work with Ctrl-C armed, reports its error in one line, and notes
    /// which globals now hold compositions. False when it failed.
    @discardableResult
    private func runStatement(_ body: () throws -> Void) -> Bool {
        let L = host.lua.L
        let base = lua_gettop(L)
        defer { lua_settop(L, base) }
        signals.beginStatement(host.scripts.interrupter)
        var succeeded = true
        do {
            try body()
        } catch let error as ScriptError {
            succeeded = false
            report(error.stop == .interrupted ? "interrupted" : error.message)
        } catch {
            succeeded = false
            report("moonreel: \(error)")
        }
        signals.endStatement()
        noteCompositionGlobals()
        if studioShown { _ = showInStudio(reporting: false) }
        return succeeded
    }

    /// Notes which globals now hold compositions and video compositions: the one assigned
    /// most recently of each kind is current (`comp` and `vc` win within one statement).
    private func noteCompositionGlobals() {
        let L = host.lua.L
        let base = lua_gettop(L)
        defer { lua_settop(L, base) }
        let catalog = REPLCatalog(host: host)
        var now: [String: [String: UnsafeRawPointer]] = [:]
        moon_pushglobaltable(L)
        lua_pushnil(L)
        while lua_next(L, -2) != 0 {
            if lua_type(L, -2) == LUA_TSTRING, lua_type(L, -1) == LUA_TUSERDATA, let kind = catalog.className(at: -1),
               kind == "Composition" || kind == "VideoComposition", let pointer = lua_topointer(L, -1) {
                now[kind, default: [:]][LuaState.string(L, at: -2)] = pointer
            }
            moon_pop(L, 1)
        }
        for (kind, preferred) in [("Composition", "comp"), ("VideoComposition", "vc")] {
            let globals = now[kind] ?? [:]
            let assigned = globals.filter { compositionGlobals[kind]?[$0.key] != $0.value }.keys
            if !assigned.isEmpty { current[kind] = assigned.contains(preferred) ? preferred : assigned.sorted().last }
        }
        compositionGlobals = now
    }

    // MARK: Commands

    private func isCommand(_ line: String) -> Bool {
        // "::label::" is Lua; ":word" is ours.
        let trimmed = line.drop { $0 == " " || $0 == "\t" }
        return trimmed.hasPrefix(":") && trimmed.dropFirst().first?.isLetter == true
    }

    /// Runs a `:` command; false for `:quit`.
    private func runCommand(_ line: String) -> Bool {
        let text = line.drop { $0 == " " || $0 == "\t" }.dropFirst()
        let name = String(text.prefix { !$0.isWhitespace })
        let argument = unquoted(text.dropFirst(name.count).trimmingWhitespace)
        switch name {
        case "quit", "q", "exit":
            return false
        case "snapshot":
            snapshot(argument)
        case "probe":
            guard !argument.isEmpty else { report(":probe needs a file: :probe FILE"); break }
            do { writeREPLOutput(try options.probe(argument) + "\n") } catch { report("moonreel: \(error)") }
        case "load":
            let words = REPL.words(in: argument)
            guard let file = words.first else { report(":load needs a script file: :load FILE [ARGS...]"); break }
            if runStatement({ try host.scripts.runScript(atPath: file, arguments: Array(words.dropFirst())) }) {
                accepted.append("-- :load \(argument) (run that script first to repeat this session)")
            }
        case "save", "save!":
            save(to: argument, replacing: name == "save!")
        case "reset":
            do {
                let fresh = try MoonreelHost(limits: options.limits, effectSearchPath: options.searchPath)
                try prepare(fresh)
                host = fresh
                compositionGlobals = [:]
                current = [:]
                accepted = []
                writeREPLOutput("fresh session: every global is gone\n")
            } catch {
                report("moonreel: cannot start a fresh session: \(error)")
            }
        case "studio":
            if let url = showInStudio(reporting: true) {
                studioShown = true
                writeREPLOutput("studio: \(url) (every statement updates the page)\n")
            }
        case "help":
            writeREPLOutput(REPLCatalog.commandHelp + "\n")
        default:
            report("unknown command :\(name); :help lists the commands")
        }
        return true
    }

    /// `:save FILE`: the statements that ran without an error, as a script (a bare expression
    /// the REPL printed becomes `print(…)`); an existing file is replaced only by `:save!`.
    private func save(to path: String, replacing: Bool) {
        guard !path.isEmpty else { report(":save needs a file: :save FILE.lua (:save! FILE.lua replaces one)"); return }
        let L = host.lua.L
        let lines = accepted.map { statement -> String in
            let base = lua_gettop(L)
            defer { lua_settop(L, base) }
            guard statement.hasPrefix("-- :load") || (try? host.lua.load(statement, chunkName: REPL.chunkName)) != nil else {
                return "print(\(statement))"
            }
            return statement
        }
        let text = "-- Saved from moonreel repl: the statements that ran without an error.\n" + lines.joined(separator: "\n") + "\n"
        do {
            try Paths.writeFile(text, to: path, replacing: replacing)
            writeREPLOutput("saved \(accepted.count) statement\(accepted.count == 1 ? "" : "s") to \(path)\n")
        } catch let error as SystemError where error.code == EEXIST {
            report(":save: \(path) exists; :save! \(path) replaces it")
        } catch {
            report(":save: \(error)")
        }
    }

    /// `:snapshot T [file.png]` through the Lua API (`av.imageGenerator(comp, {videoComposition =
    /// vc}):copyImage`): the current composition, through the current video composition (its
    /// instructions and layers) when there is one — what the export will show.
    private func snapshot(_ argument: String) {
        let time = argument.prefix { !$0.isWhitespace }
        guard let seconds = Double(time), seconds.isFinite, seconds >= 0 else {
            report(":snapshot needs a time in seconds: :snapshot T [file.png]")
            return
        }
        guard let name = currentGlobal("Composition", fallback: "comp") else {
            report(":snapshot: no current composition; assign one to a global first, e.g. comp = av.composition()")
            return
        }
        let videoComposition = currentGlobal("VideoComposition", fallback: "vc")
        var path = unquoted(argument.dropFirst(time.count).trimmingWhitespace)
        if path.isEmpty { path = nextSnapshotPath() }
        let L = host.lua.L
        runStatement {
            try PackageResources.snapshot_lua.withUnsafeBytes { try host.lua.load(bytes: $0, chunkName: "=snapshot") }
            for global in [name, videoComposition] {
                moon_pushglobaltable(L)
                if let global { lua_pushstring(L, global); lua_rawget(L, -2) } else { lua_pushnil(L) }
                moon_remove(L, -2)
            }
            lua_pushnumber(L, seconds)
            lua_pushstring(L, path)
            try host.lua.withRunLimits(host.scripts.limits.script) { try host.lua.call(argumentCount: 4) }
            writeREPLOutput("wrote \(path) (\(name)\(videoComposition.map { " through \($0)" } ?? "") at \(time) s)\n")
        }
    }

    /// Hands the current composition and video composition to the studio; its address, or
    /// nil (said when `reporting`) when there is nothing to show or no studio.
    private func showInStudio(reporting: Bool) -> String? {
        guard let show = options.showInStudio else {
            if reporting { report(":studio is not available in this program") }
            return nil
        }
        guard let composition: Composition = currentObject("Composition", fallback: "comp") else {
            if reporting { report(":studio: no current composition; assign one to a global first, e.g. comp = av.composition()") }
            return nil
        }
        do {
            return try show(composition, currentObject("VideoComposition", fallback: "vc"))
        } catch {
            if reporting { report("moonreel: studio: \(error)") }
            return nil
        }
    }

    /// The engine object held by the current global of class `kind`.
    private func currentObject<T: AnyObject>(_ kind: String, fallback: String) -> T? {
        guard let name = currentGlobal(kind, fallback: fallback) else { return nil }
        let L = host.lua.L
        let base = lua_gettop(L)
        defer { lua_settop(L, base) }
        moon_pushglobaltable(L)
        lua_pushstring(L, name)
        lua_rawget(L, -2)
        return LuaState.objectInUserdata(L, -1) as? T
    }

    /// The global that holds the current object of class `kind` (see the type's documentation).
    private func currentGlobal(_ kind: String, fallback: String) -> String? {
        let L = host.lua.L
        let base = lua_gettop(L)
        defer { lua_settop(L, base) }
        let catalog = REPLCatalog(host: host)
        for name in [current[kind], fallback].compactMap({ $0 }) {
            moon_pushglobaltable(L)
            lua_pushstring(L, name)
            lua_rawget(L, -2)
            if catalog.className(at: -1) == kind { return name }
            lua_settop(L, base)
        }
        return nil
    }

    /// snapshot-1.png, snapshot-2.png, …: the first that does not exist yet.
    private func nextSnapshotPath() -> String {
        while true {
            snapshotCount += 1
            let path = "snapshot-\(snapshotCount).png"
            if access(path, F_OK) != 0 { return path }
        }
    }

    /// Reports one failure (a piped session then exits with 1).
    private func report(_ message: String) {
        failed = true
        reportREPLError(message)
    }

    /// Words separated by spaces; "…" or '…' keep spaces inside one word.
    static func words(in text: String) -> [String] {
        var words: [String] = [], current = "", quote: Character?
        var inWord = false
        for character in text {
            if let open = quote {
                if character == open { quote = nil } else { current.append(character) }
            } else if character == "\"" || character == "'" {
                quote = character
                inWord = true
            } else if character == " " || character == "\t" {
                if inWord { words.append(current) }
                current = ""
                inWord = false
            } else {
                current.append(character)
                inWord = true
            }
        }
        if inWord { words.append(current) }
        return words
    }

    private func unquoted(_ text: String) -> String {
        for quote in ["\"", "'"] where text.count >= 2 && text.hasPrefix(quote) && text.hasSuffix(quote) {
            return String(text.dropFirst().dropLast())
        }
        return text
    }

    // MARK: Setting up a host

    /// Adds what only the REPL has: `help`, the result formatter, and the export observer
    /// that cancels a statement's export on Ctrl-C (the host's shared cancellation flag
    /// cannot be cleared again, so the REPL cancels each export itself).
    private func prepare(_ host: MoonreelHost) throws {
        options.configureHost(host)
        let report = host.api.policy.exportEvents
        host.api.policy.exportEvents = { [signals] event in
            report?(event)
            if signals.exportsCancelled { event.session.cancel() }
        }
        let lua = host.lua
        lua.pushFunction("help") { [unowned host] call in
            writeREPLOutput(REPLCatalog(host: host).help(forValueAt: 1) + "\n")
            return 0
        }
        lua.setGlobal("help")
        // Lua/formatter.lua: results as lua.c prints them, with short previews of tables.
        try PackageResources.formatter_lua.withUnsafeBytes { try lua.load(bytes: $0, chunkName: "=[moonreel repl]") }
        try lua.call(argumentCount: 0, resultCount: 1)
        lua_setfield(lua.L, MOON_LUA_REGISTRYINDEX, REPL.formatterKey)
    }

}

private extension Substring {
    var trimmingWhitespace: String {
        String(drop { $0.isWhitespace }.reversed().drop { $0.isWhitespace }.reversed())
    }
}
