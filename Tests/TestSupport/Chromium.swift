import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// Debian's headless `chromium` driven through the Chrome DevTools Protocol over a pipe
/// (`--remote-debugging-pipe`: Chromium reads commands from its fd 3 and writes replies and
/// events to its fd 4, each message a JSON text ended by a NUL byte), for tests of pages we
/// serve. One browser, one page. Every call has a timeout and throws `Tool.Failure` with a
/// message instead of hanging.
public final class HeadlessChromium: @unchecked Sendable {
    /// The chromium binary the tests use (`$CHROMIUM_BIN` if set, else the first of the usual
    /// install paths), or nil when none is installed: for the failure message.
    public static var executable: String? {
        let override = ProcessInfo.processInfo.environment["CHROMIUM_BIN"].map { [$0] } ?? []
        let candidates = override + ["/usr/bin/chromium", "/usr/lib/chromium/chromium", "/usr/bin/chromium-browser",
                                     "/usr/bin/google-chrome", "/usr/bin/google-chrome-stable"]
        return candidates.first { FileManager.default.isExecutableFile(atPath: $0) }
    }

    /// The browser's process id (also its process group id).
    public let processID: pid_t
    /// The viewport size the page was created with.
    public let width: Int, height: Int

    private let pipe: DevToolsPipe
    /// Holds the profile (`profile/`) and Chromium's stdout and stderr (`chromium.log`).
    private let directory: String
    private var sessionID = ""
    private let closeLock = NSLock()
    private var isClosed = false

    /// Launches `chromium --headless=new --remote-debugging-pipe --no-sandbox --disable-gpu
    /// --autoplay-policy=no-user-gesture-required --window-size=W,H` (and a few flags that keep
    /// it quiet and deterministic) with a fresh temporary profile, audio not muted, then opens
    /// an about:blank page of `width`×`height` and attaches to it.
    public init(width: Int = 1280, height: Int = 800) throws {
        guard let executable = Self.executable else {
            throw Tool.Failure(description: "chromium is not installed (looked for $CHROMIUM_BIN, /usr/bin/chromium, "
                               + "/usr/bin/chromium-browser, /usr/bin/google-chrome): apt-get install chromium")
        }
        self.width = width
        self.height = height
        directory = FileManager.default.temporaryDirectory.appendingPathComponent("headless-chromium-\(UUID().uuidString)").path
        do {
            try FileManager.default.createDirectory(atPath: directory + "/profile", withIntermediateDirectories: true)
        } catch {
            throw Tool.Failure(description: "cannot create a Chromium profile folder in \(directory): \(error)")
        }
        let arguments = [
            "--headless=new", "--remote-debugging-pipe", "--no-sandbox", "--disable-gpu",
            "--no-first-run", "--no-default-browser-check", "--user-data-dir=\(directory)/profile",
            "--autoplay-policy=no-user-gesture-required", "--window-size=\(width),\(height)",
            // Small /dev/shm in containers crashes Chromium; timers and rendering must not be
            // throttled as for a background tab; screenshots in plain sRGB without scrollbars.
            "--disable-dev-shm-usage", "--disable-background-timer-throttling",
            "--disable-renderer-backgrounding", "--disable-backgrounding-occluded-windows",
            "--disable-background-networking", "--disable-component-update", "--disable-extensions",
            "--disable-sync", "--metrics-recording-only", "--password-store=basic", "--use-mock-keychain",
            "--force-color-profile=srgb", "--hide-scrollbars", "about:blank",
        ]
        let logPath = directory + "/chromium.log"
        let launched: (pid: pid_t, commands: Int32, replies: Int32)
        do {
            launched = try Self.spawn(executable, arguments, logPath: logPath)
        } catch {
            try? FileManager.default.removeItem(atPath: directory)
            throw error
        }
        processID = launched.pid
        pipe = DevToolsPipe(commands: launched.commands, replies: launched.replies, logPath: logPath)
        let reader = Thread { [pipe] in pipe.readLoop() }
        reader.name = "HeadlessChromium reader"
        reader.start()
        do {
            // The first reply waits for the browser to start: allow a cold start. (Width and
            // height here would need a new window; the viewport is sized below instead.)
            let target = try pipe.send("Target.createTarget", ["url": "about:blank"],
                                       sessionID: nil, timeout: 30)
            guard let targetID = target["targetId"] as? String else {
                throw Tool.Failure(description: "Target.createTarget returned no targetId: \(target)")
            }
            let attached = try pipe.send("Target.attachToTarget", ["targetId": targetID, "flatten": true],
                                         sessionID: nil, timeout: 20)
            guard let sessionID = attached["sessionId"] as? String else {
                throw Tool.Failure(description: "Target.attachToTarget returned no sessionId: \(attached)")
            }
            self.sessionID = sessionID
            // The tab Chromium opened by itself would only cost a renderer process.
            if let targets = try? pipe.send("Target.getTargets", [:], sessionID: nil, timeout: 5)["targetInfos"] as? [[String: Any]] {
                for info in targets where info["type"] as? String == "page" {
                    if let other = info["targetId"] as? String, other != targetID {
                        _ = try? pipe.send("Target.closeTarget", ["targetId": other], sessionID: nil, timeout: 5)
                    }
                }
            }
            for domain in ["Page", "Runtime", "Log", "Inspector"] { try send("\(domain).enable") }
            // --window-size sizes the window, and headless keeps 87 px of it for a toolbar it
            // does not draw: fix the viewport (and screen) at exactly width×height instead.
            try send("Emulation.setDeviceMetricsOverride", ["width": width, "height": height, "deviceScaleFactor": 1,
                                                            "mobile": false, "screenWidth": width, "screenHeight": height])
            // Key events go to the focused page; a headless window is not focused by itself.
            try send("Emulation.setFocusEmulationEnabled", ["enabled": true])
            try send("Page.bringToFront")
        } catch {
            close()
            throw Tool.Failure(description: "starting \(executable) for DevTools failed: \(error)")
        }
    }

    deinit { close() }

    /// Sends a raw DevTools command to the page (e.g. "Emulation.setDeviceMetricsOverride")
    /// and returns its result; throws with the protocol's error message.
    @discardableResult
    public func send(_ method: String, _ parameters: [String: Any] = [:], timeout: Double = 20) throws -> [String: Any] {
        try pipe.send(method, parameters, sessionID: sessionID, timeout: timeout)
    }

    /// Loads `url` (Page.navigate) and waits for the page's load event; throws on a network
    /// error or when the load takes longer than `timeout` seconds.
    public func navigate(to url: String, timeout: Double = 20) throws {
        let deadline = Date().addingTimeInterval(timeout)
        let mark = pipe.eventMark
        let result = try send("Page.navigate", ["url": url], timeout: timeout)
        if let errorText = result["errorText"] as? String, !errorText.isEmpty {
            throw Tool.Failure(description: "navigating to \(Self.abbreviated(url, limit: 120)) failed: \(errorText)")
        }
        // No loader: a same-document navigation (only the fragment changed), no load event.
        guard result["loaderId"] != nil else { return }
        guard pipe.waitForEvent("Page.loadEventFired", sessionID: sessionID, after: mark, until: deadline) != nil else {
            throw Tool.Failure(description: "\(Self.abbreviated(url, limit: 120)) did not finish loading within \(timeout) s"
                               + pipe.describeEnd() + Self.tail(of: consoleLines))
        }
    }

    /// Evaluates `expression` in the page (Runtime.evaluate, awaiting a promise it returns) and
    /// returns the value as a Foundation JSON object (String, Bool, numbers, [Any],
    /// [String: Any]); nil for undefined and null. NaN and ±Infinity come back as Double.
    /// Throws with the exception's text if the script threw or the promise rejected.
    @discardableResult
    public func evaluate(_ expression: String, timeout: Double = 20) throws -> Any? {
        let outcome = try runScript(expression, shown: expression, timeout: timeout)
        if let exception = outcome.exception {
            throw Tool.Failure(description: "evaluating \(Self.abbreviated(expression)) threw: \(exception)")
        }
        return outcome.value
    }

    /// Evaluates `expression` every `interval` seconds until its value is truthy (as JavaScript
    /// judges it; a thrown exception counts as not yet). Throws naming the expression, its last
    /// value or exception and the page's last console lines when `timeout` passes.
    public func waitUntil(_ expression: String, timeout: Double = 20, interval: Double = 0.05) throws {
        let deadline = Date().addingTimeInterval(timeout)
        // Judged in the page so that objects, NaN and DOM nodes count as JavaScript counts them.
        let probe = """
            (async () => { const v = await (\(expression)
            ); let s; try { s = JSON.stringify(v); } catch (e) { } return [!!v, s === undefined ? String(v) : s]; })()
            """
        var last = "(never evaluated)"
        while true {
            let remaining = deadline.timeIntervalSinceNow
            if remaining <= 0 { break }
            do {
                let outcome = try runScript(probe, shown: expression, timeout: max(remaining, 0.1))
                if let exception = outcome.exception {
                    last = "it threw " + exception
                } else if let pair = outcome.value as? [Any] {
                    if pair.first as? Bool == true { return }
                    last = pair.count > 1 ? "\(pair[1])" : "?"
                }
            } catch let failure as Tool.Failure {
                last = failure.description
                if !pipe.isOpen { break }
            }
            Thread.sleep(forTimeInterval: min(interval, max(deadline.timeIntervalSinceNow, 0)))
        }
        throw Tool.Failure(description: "timed out after \(timeout) s waiting for \(Self.abbreviated(expression)); last value: \(last)"
                           + pipe.describeEnd() + Self.tail(of: consoleLines))
    }

    /// The page's viewport as a PNG (Page.captureScreenshot).
    public func screenshot() throws -> Data {
        let result = try send("Page.captureScreenshot", ["format": "png"], timeout: 30)
        guard let base64 = result["data"] as? String, let png = Data(base64Encoded: base64) else {
            throw Tool.Failure(description: "Page.captureScreenshot returned no PNG data")
        }
        return png
    }

    /// Presses and releases a key (Input.dispatchKeyEvent keyDown, keyUp) with `event.key`,
    /// `event.code`, `keyCode` and `shiftKey` set as a real keyboard would: " ", "Enter",
    /// "Escape", "Tab", "Backspace", "Delete", "ArrowLeft/Right/Up/Down", "Home", "End",
    /// "PageUp", "PageDown", "F1"–"F12", letters, digits and US-layout punctuation. With `shift`
    /// a lower-case letter arrives as its capital (as with a real Shift key).
    public func press(_ key: String, shift: Bool = false) throws {
        guard let definition = Self.keyDefinition(key, shift: shift) else {
            throw Tool.Failure(description: "press: unknown key name \"\(key)\"")
        }
        var down: [String: Any] = [
            "type": definition.text == nil ? "rawKeyDown" : "keyDown", "key": definition.key, "code": definition.code,
            "windowsVirtualKeyCode": definition.keyCode, "nativeVirtualKeyCode": definition.keyCode,
            "modifiers": shift ? 8 : 0,
        ]
        if let text = definition.text { down["text"] = text; down["unmodifiedText"] = text }
        try send("Input.dispatchKeyEvent", down)
        var up = down
        up["type"] = "keyUp"
        up["text"] = nil
        up["unmodifiedText"] = nil
        try send("Input.dispatchKeyEvent", up)
    }

    /// A left click at page coordinates (CSS pixels from the viewport's top left): the mouse
    /// moves there, presses and releases (Input.dispatchMouseEvent).
    public func click(x: Double, y: Double) throws {
        try mouse("mouseMoved", x, y, button: "none", buttons: 0)
        try mouse("mousePressed", x, y, button: "left", buttons: 1)
        try mouse("mouseReleased", x, y, button: "left", buttons: 0)
    }

    /// Presses the left button at `from`, moves to `to` in `steps` equal moves with the button
    /// held, and releases it there.
    public func drag(from: (x: Double, y: Double), to: (x: Double, y: Double), steps: Int = 10) throws {
        try mouse("mouseMoved", from.x, from.y, button: "none", buttons: 0)
        try mouse("mousePressed", from.x, from.y, button: "left", buttons: 1)
        let count = max(steps, 1)
        for step in 1...count {
            let t = Double(step) / Double(count)
            try mouse("mouseMoved", from.x + (to.x - from.x) * t, from.y + (to.y - from.y) * t, button: "left", buttons: 1)
        }
        try mouse("mouseReleased", to.x, to.y, button: "left", buttons: 0)
    }

    /// What the page wrote to the console and the exceptions it did not catch
    /// (Runtime.consoleAPICalled, Runtime.exceptionThrown), plus browser log entries such as
    /// failed loads (Log.entryAdded) and crashes, one line each, oldest first: for failure
    /// messages.
    public var consoleLines: [String] { pipe.consoleLines }

    /// Kills Chromium (SIGKILL to its whole process group: a test process may block SIGTERM and
    /// children inherit that), reaps it and removes the temporary profile. Safe to call twice;
    /// also called from deinit.
    public func close() {
        closeLock.lock()
        defer { closeLock.unlock() }
        if isClosed { return }
        isClosed = true
        kill(-processID, SIGKILL)
        kill(processID, SIGKILL)
        // Reap the browser (a bounded wait: never hang a test run on cleanup).
        let deadline = Date().addingTimeInterval(5)
        var status: Int32 = 0
        while Date() < deadline {
            let reaped = waitpid(processID, &status, WNOHANG)
            if reaped == processID || (reaped < 0 && errno != EINTR) { break }
            usleep(2_000)
        }
        pipe.closeCommands()
        // Children may still be dying and writing to the profile: retry the removal briefly.
        for _ in 0..<20 {
            do { try FileManager.default.removeItem(atPath: directory); break } catch { usleep(25_000) }
        }
    }

    // MARK: - Launching

    /// posix_spawn with exact descriptors: commands pipe read end → fd 3, replies pipe write end
    /// → fd 4, stdin from /dev/null, stdout and stderr to `logPath`, everything else closed; a
    /// process group of its own; an empty signal mask and default dispositions.
    private static func spawn(_ executable: String, _ arguments: [String], logPath: String) throws
        -> (pid: pid_t, commands: Int32, replies: Int32) {
        var commandPipe: [Int32] = [-1, -1], replyPipe: [Int32] = [-1, -1]
        guard makePipe(&commandPipe) == 0 else { throw errnoFailure("pipe2") }
        guard makePipe(&replyPipe) == 0 else {
            let failure = errnoFailure("pipe2")
            closeDescriptors(commandPipe)
            throw failure
        }
        // Chromium's ends, moved above 4 so that neither dup2 below overwrites the other's source.
        let childRead = fcntl(commandPipe[0], F_DUPFD_CLOEXEC, 10)
        let childWrite = fcntl(replyPipe[1], F_DUPFD_CLOEXEC, 10)
        closeDescriptors([commandPipe[0], replyPipe[1]])
        let ours = (commands: commandPipe[1], replies: replyPipe[0])
        defer { closeDescriptors([childRead, childWrite]) } // the parent's copies of Chromium's ends
        guard childRead >= 0, childWrite >= 0 else {
            let failure = errnoFailure("fcntl(F_DUPFD_CLOEXEC)")
            closeDescriptors([ours.commands, ours.replies])
            throw failure
        }
        // Writes must never block forever on a browser that stopped reading.
        _ = fcntl(ours.commands, F_SETFL, fcntl(ours.commands, F_GETFL) | O_NONBLOCK)

        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0)
        posix_spawn_file_actions_addopen(&actions, 1, logPath, O_WRONLY | O_CREAT | O_TRUNC, 0o644)
        posix_spawn_file_actions_adddup2(&actions, 1, 2)
        posix_spawn_file_actions_adddup2(&actions, childRead, 3)
        posix_spawn_file_actions_adddup2(&actions, childWrite, 4)
        // Descriptors the test process left inheritable (other children's pipes) must not leak
        // into the browser, or those pipes never see end-of-file while it runs.
        if let closeFrom = addCloseFrom { _ = closeFrom(&actions, 5) }

        var attributes = posix_spawnattr_t()
        posix_spawnattr_init(&attributes)
        defer { posix_spawnattr_destroy(&attributes) }
        posix_spawnattr_setpgroup(&attributes, 0)
        var mask = sigset_t()
        sigemptyset(&mask)
        posix_spawnattr_setsigmask(&attributes, &mask)
        var defaults = sigset_t()
        sigemptyset(&defaults)
        for signal in [SIGTERM, SIGINT, SIGHUP, SIGQUIT, SIGPIPE, SIGCHLD, SIGUSR1, SIGUSR2, SIGALRM] { sigaddset(&defaults, signal) }
        posix_spawnattr_setsigdefault(&attributes, &defaults)
        posix_spawnattr_setflags(&attributes, Int16(POSIX_SPAWN_SETPGROUP | POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF))

        let argv: [UnsafeMutablePointer<CChar>?] = ([executable] + arguments).map { strdup($0) } + [nil]
        defer { for pointer in argv { free(pointer) } }
        var pid: pid_t = 0
        let result = posix_spawn(&pid, executable, &actions, &attributes, argv, environ)
        guard result == 0 else {
            closeDescriptors([ours.commands, ours.replies])
            throw Tool.Failure(description: "cannot launch \(executable): \(String(cString: strerror(result)))")
        }
        return (pid, ours.commands, ours.replies)
    }

    /// glibc's posix_spawn_file_actions_addclosefrom_np (2.34+), which Swift's Glibc module
    /// does not import (it is a GNU extension).
    private typealias CloseFrom = @convention(c) (UnsafeMutablePointer<posix_spawn_file_actions_t>?, Int32) -> Int32
    private static let addCloseFrom: CloseFrom? = {
        guard let symbol = dlsym(dlopen(nil, RTLD_NOW), "posix_spawn_file_actions_addclosefrom_np") else { return nil }
        return unsafeBitCast(symbol, to: CloseFrom.self)
    }()

    /// pipe2(O_CLOEXEC), another GNU extension Swift does not import: close-on-exec from the
    /// start, so a process another thread spawns meanwhile cannot inherit our ends.
    private typealias Pipe2 = @convention(c) (UnsafeMutablePointer<Int32>?, Int32) -> Int32
    private static let pipe2: Pipe2? = {
        guard let symbol = dlsym(dlopen(nil, RTLD_NOW), "pipe2") else { return nil }
        return unsafeBitCast(symbol, to: Pipe2.self)
    }()

    private static func makePipe(_ descriptors: inout [Int32]) -> Int32 {
        if let pipe2 { return pipe2(&descriptors, O_CLOEXEC) }
        guard Glibc.pipe(&descriptors) == 0 else { return -1 }
        for descriptor in descriptors { _ = fcntl(descriptor, F_SETFD, FD_CLOEXEC) }
        return 0
    }

    private static func errnoFailure(_ call: String) -> Tool.Failure {
        Tool.Failure(description: "\(call) failed: \(String(cString: strerror(errno)))")
    }

    private static func closeDescriptors(_ descriptors: [Int32]) {
        for descriptor in descriptors where descriptor >= 0 { _ = Glibc.close(descriptor) }
    }

    // MARK: - Helpers

    /// Runtime.evaluate: the value (nil for undefined and null), or the text of what the script
    /// threw. Throws only when there is no answer (timeout, Chromium gone), naming `shown`.
    private func runScript(_ expression: String, shown: String, timeout: Double) throws -> (value: Any?, exception: String?) {
        let started = Date()
        let reply: [String: Any]
        do {
            // Chromium stops a script still running after `timeout` (an endless loop); the reply
            // wait is a second longer so that answer arrives first.
            reply = try send("Runtime.evaluate", ["expression": expression, "returnByValue": true, "awaitPromise": true,
                                                 "userGesture": true, "timeout": Int(timeout * 1000)], timeout: timeout + 1)
        } catch let failure as Tool.Failure {
            let overran = Date().timeIntervalSince(started) >= timeout && pipe.isOpen
            throw Tool.Failure(description: "evaluating \(Self.abbreviated(shown)): \(failure.description)"
                               + (overran ? " (still running after \(timeout) s: an endless loop, or a promise that never settles?)" : ""))
        }
        if let details = reply["exceptionDetails"] as? [String: Any] { return (nil, Self.describe(exception: details)) }
        guard let result = reply["result"] as? [String: Any] else { return (nil, nil) }
        if let special = result["unserializableValue"] as? String {
            switch special {
            case "NaN": return (Double.nan, nil)
            case "Infinity": return (Double.infinity, nil)
            case "-Infinity": return (-Double.infinity, nil)
            case "-0": return (-0.0, nil)
            default: return (special, nil) // BigInt literals such as "12n"
            }
        }
        guard let value = result["value"], !(value is NSNull) else { return (nil, nil) }
        return (value, nil)
    }

    private func mouse(_ type: String, _ x: Double, _ y: Double, button: String, buttons: Int) throws {
        var parameters: [String: Any] = ["type": type, "x": x, "y": y, "button": button, "buttons": buttons]
        if type != "mouseMoved" { parameters["clickCount"] = 1 }
        try send("Input.dispatchMouseEvent", parameters)
    }

    private static func keyDefinition(_ key: String, shift: Bool) -> (key: String, code: String, keyCode: Int, text: String?)? {
        let named: [String: (code: String, keyCode: Int, text: String?)] = [
            " ": ("Space", 32, " "), "Enter": ("Enter", 13, "\r"), "Tab": ("Tab", 9, nil), "Escape": ("Escape", 27, nil),
            "Backspace": ("Backspace", 8, nil), "Delete": ("Delete", 46, nil),
            "ArrowLeft": ("ArrowLeft", 37, nil), "ArrowUp": ("ArrowUp", 38, nil),
            "ArrowRight": ("ArrowRight", 39, nil), "ArrowDown": ("ArrowDown", 40, nil),
            "Home": ("Home", 36, nil), "End": ("End", 35, nil), "PageUp": ("PageUp", 33, nil), "PageDown": ("PageDown", 34, nil),
        ]
        if let entry = named[key] { return (key, entry.code, entry.keyCode, entry.text) }
        if key.count >= 2, key.count <= 3, key.hasPrefix("F"), let number = Int(key.dropFirst()), (1...12).contains(number) {
            return (key, key, 111 + number, nil)
        }
        guard key.count == 1, let scalar = key.unicodeScalars.first else { return nil }
        if scalar.properties.isAlphabetic, scalar.isASCII {
            let upper = key.uppercased()
            let typed = shift ? upper : key
            return (typed, "Key" + upper, Int(upper.unicodeScalars.first?.value ?? 0), typed)
        }
        if let digit = Int(key) { return (key, "Digit\(digit)", 48 + digit, key) }
        // US layout: the unshifted and shifted character of each punctuation key.
        let punctuation: [(Character, Character, String, Int)] = [
            (",", "<", "Comma", 188), (".", ">", "Period", 190), ("/", "?", "Slash", 191), (";", ":", "Semicolon", 186),
            ("'", "\"", "Quote", 222), ("[", "{", "BracketLeft", 219), ("]", "}", "BracketRight", 221),
            ("\\", "|", "Backslash", 220), ("-", "_", "Minus", 189), ("=", "+", "Equal", 187), ("`", "~", "Backquote", 192),
            ("1", "!", "Digit1", 49), ("2", "@", "Digit2", 50), ("3", "#", "Digit3", 51), ("4", "$", "Digit4", 52),
            ("5", "%", "Digit5", 53), ("6", "^", "Digit6", 54), ("7", "&", "Digit7", 55), ("8", "*", "Digit8", 56),
            ("9", "(", "Digit9", 57), ("0", ")", "Digit0", 48),
        ]
        let character = Character(key)
        if let entry = punctuation.first(where: { $0.0 == character || $0.1 == character }) {
            return (key, entry.2, entry.3, key)
        }
        return (key, "", 0, key) // some other character: typed as text
    }

    fileprivate static func describe(exception details: [String: Any]) -> String {
        let exception = details["exception"] as? [String: Any]
        let text = (exception?["description"] as? String) ?? (exception?["value"].map { "\($0)" }) ?? (details["text"] as? String) ?? "\(details)"
        // Stack traces of a page loaded from a data: URL repeat the whole URL in every frame.
        var described = text
        if !text.contains("\n    at "), let url = details["url"] as? String, !url.isEmpty, let line = details["lineNumber"] as? Int {
            described += " (at \(url):\(line + 1))" // no stack (a thrown non-Error): say where
        }
        return described.replacingOccurrences(of: #"data:[^\s)]{60}[^\s):]*"#, with: "data:…", options: .regularExpression)
    }

    fileprivate static func abbreviated(_ text: String, limit: Int = 200) -> String {
        text.count <= limit ? text : String(text.prefix(limit)) + "…"
    }

    private static func tail(of lines: [String]) -> String {
        lines.isEmpty ? "" : "\npage console (last \(min(lines.count, 20))):\n" + lines.suffix(20).joined(separator: "\n")
    }
}

/// The pipe to and from Chromium: numbered commands matched to their replies, events kept
/// for waiting on, console lines collected; a reader thread fills it.
private final class DevToolsPipe: @unchecked Sendable {
    private let condition = NSCondition()
    private let writeLock = NSLock()
    private var commands: Int32
    private let replies: Int32
    private let logPath: String
    private var nextID = 0
    private var awaited: Set<Int> = []
    private var received: [Int: [String: Any]] = [:]
    /// The most recent events, numbered from 1 in order of arrival.
    private var events: [(number: Int, message: [String: Any])] = []
    private var eventCount = 0
    private var console: [String] = []
    /// Why the pipe closed, once it has.
    private var ending: String?

    init(commands: Int32, replies: Int32, logPath: String) {
        self.commands = commands
        self.replies = replies
        self.logPath = logPath
    }

    var isOpen: Bool { condition.lock(); defer { condition.unlock() }; return ending == nil }
    var consoleLines: [String] { condition.lock(); defer { condition.unlock() }; return console }
    /// The number of the last event received: wait for events after it.
    var eventMark: Int { condition.lock(); defer { condition.unlock() }; return eventCount }

    func send(_ method: String, _ parameters: [String: Any], sessionID: String?, timeout: Double) throws -> [String: Any] {
        var message: [String: Any] = ["method": method, "params": parameters]
        if let sessionID { message["sessionId"] = sessionID }
        condition.lock()
        if ending != nil { condition.unlock(); throw Tool.Failure(description: "\(method): " + endedMessage()) }
        nextID += 1
        let id = nextID
        awaited.insert(id)
        condition.unlock()
        message["id"] = id
        let deadline = Date().addingTimeInterval(timeout)
        do {
            guard JSONSerialization.isValidJSONObject(message) else {
                throw Tool.Failure(description: "\(method): parameters are not JSON: \(parameters)")
            }
            var bytes = [UInt8](try JSONSerialization.data(withJSONObject: message))
            bytes.append(0)
            try write(bytes, until: deadline, method: method)
        } catch {
            condition.lock(); awaited.remove(id); condition.unlock()
            throw error
        }
        condition.lock()
        defer { awaited.remove(id); condition.unlock() }
        while received[id] == nil {
            if ending != nil { throw Tool.Failure(description: "\(method): " + endedMessage()) }
            if !condition.wait(until: deadline), received[id] == nil {
                throw Tool.Failure(description: "\(method) got no reply within \(timeout) s")
            }
        }
        let reply = received.removeValue(forKey: id) ?? [:]
        if let error = reply["error"] as? [String: Any] {
            let detail = (error["data"] as? String).map { " (\($0))" } ?? ""
            throw Tool.Failure(description: "\(method) failed: \(error["message"] as? String ?? "\(error)")\(detail)")
        }
        return reply["result"] as? [String: Any] ?? [:]
    }

    /// The first event named `method` (of `sessionID`) numbered above `mark`, or nil at `deadline`.
    func waitForEvent(_ method: String, sessionID: String, after mark: Int, until deadline: Date) -> [String: Any]? {
        condition.lock()
        defer { condition.unlock() }
        while true {
            if let event = events.first(where: { $0.number > mark && $0.message["method"] as? String == method
                                                 && $0.message["sessionId"] as? String == sessionID }) {
                return event.message["params"] as? [String: Any] ?? [:]
            }
            if ending != nil || !condition.wait(until: deadline) { return nil }
        }
    }

    /// Writes a whole message to the non-blocking command pipe. SIGPIPE (the browser died) is
    /// blocked for this thread and discarded, so the test process gets EPIPE instead of dying.
    private func write(_ bytes: [UInt8], until deadline: Date, method: String) throws {
        writeLock.lock()
        defer { writeLock.unlock() }
        var sigpipe = sigset_t(), previous = sigset_t(), pending = sigset_t()
        sigemptyset(&sigpipe)
        sigaddset(&sigpipe, SIGPIPE)
        pthread_sigmask(SIG_BLOCK, &sigpipe, &previous)
        sigpending(&pending)
        let wasPending = sigismember(&pending, SIGPIPE) == 1
        var failure: Int32 = 0
        var offset = 0
        while offset < bytes.count, commands >= 0 {
            let written = bytes.withUnsafeBytes { buffer -> Int in
                guard let base = buffer.baseAddress else { return 0 }
                return Glibc.write(commands, base + offset, buffer.count - offset)
            }
            if written > 0 { offset += written; continue }
            if written < 0 && errno == EINTR { continue }
            if written < 0 && errno == EAGAIN {
                let milliseconds = Int32(max(0, min(deadline.timeIntervalSinceNow * 1000, 60_000)))
                if milliseconds == 0 { failure = ETIMEDOUT; break }
                var descriptor = pollfd(fd: commands, events: Int16(POLLOUT), revents: 0)
                _ = poll(&descriptor, 1, milliseconds)
                continue
            }
            failure = written < 0 ? errno : EIO
            break
        }
        if commands < 0 { failure = EBADF }
        if failure == EPIPE && !wasPending {
            var none = timespec(tv_sec: 0, tv_nsec: 0)
            _ = sigtimedwait(&sigpipe, nil, &none)
        }
        pthread_sigmask(SIG_SETMASK, &previous, nil)
        switch failure {
        case 0: return
        case ETIMEDOUT: throw Tool.Failure(description: "\(method): Chromium stopped reading commands")
        case EPIPE, EBADF: throw Tool.Failure(description: "\(method): " + endedMessage())
        default: throw Tool.Failure(description: "\(method): writing to Chromium failed: \(String(cString: strerror(failure)))")
        }
    }

    /// Reads NUL-terminated messages until Chromium closes its end (it exited or was killed).
    func readLoop() {
        var chunk = [UInt8](repeating: 0, count: 1 << 16)
        var buffer: [UInt8] = []
        while true {
            let count = chunk.withUnsafeMutableBytes { Glibc.read(replies, $0.baseAddress, $0.count) }
            if count < 0 && errno == EINTR { continue }
            if count <= 0 { break }
            var start = buffer.count
            buffer.append(contentsOf: chunk[0..<count])
            var consumed = 0
            while let end = buffer[start...].firstIndex(of: 0) {
                handle(Data(buffer[consumed..<end]))
                consumed = end + 1
                start = consumed
            }
            if consumed > 0 { buffer.removeFirst(consumed) }
        }
        _ = Glibc.close(replies)
        condition.lock()
        if ending == nil { ending = "Chromium closed the DevTools pipe (it exited or crashed)" }
        condition.broadcast()
        condition.unlock()
    }

    func closeCommands() {
        writeLock.lock()
        if commands >= 0 { _ = Glibc.close(commands); commands = -1 }
        writeLock.unlock()
        condition.lock()
        if ending == nil { ending = "Chromium was closed" }
        condition.broadcast()
        condition.unlock()
    }

    private func handle(_ data: Data) {
        guard let message = (try? JSONSerialization.jsonObject(with: data)) as? [String: Any] else { return }
        condition.lock()
        defer { condition.broadcast(); condition.unlock() }
        if let id = message["id"] as? Int {
            if awaited.contains(id) { received[id] = message } // else: its sender timed out
            return
        }
        guard let method = message["method"] as? String else { return }
        eventCount += 1
        events.append((eventCount, message))
        if events.count > 2000 { events.removeFirst(events.count - 1000) }
        if let line = Self.consoleLine(method, message["params"] as? [String: Any] ?? [:]) { console.append(line) }
    }

    private static func consoleLine(_ method: String, _ parameters: [String: Any]) -> String? {
        switch method {
        case "Runtime.consoleAPICalled":
            let arguments = (parameters["args"] as? [[String: Any]] ?? []).map { argument -> String in
                if let value = argument["value"], !(value is NSNull) { return "\(value)" }
                return argument["unserializableValue"] as? String ?? argument["description"] as? String
                    ?? argument["type"] as? String ?? "?"
            }
            return "console.\(parameters["type"] as? String ?? "log"): " + arguments.joined(separator: " ")
        case "Runtime.exceptionThrown":
            guard let details = parameters["exceptionDetails"] as? [String: Any] else { return nil }
            return "uncaught exception: " + HeadlessChromium.describe(exception: details)
        case "Log.entryAdded":
            guard let entry = parameters["entry"] as? [String: Any] else { return nil }
            let url = (entry["url"] as? String).map { " (\(HeadlessChromium.abbreviated($0, limit: 120)))" } ?? ""
            return "log.\(entry["level"] as? String ?? "info"): \(entry["text"] as? String ?? "")\(url)"
        case "Inspector.targetCrashed":
            return "the page crashed"
        default:
            return nil
        }
    }

    /// Why commands fail now, with the end of Chromium's own log. Call with `condition` held.
    private func endedMessage() -> String {
        (ending ?? "Chromium exited (its end of the command pipe is closed)") + logTail()
    }

    /// Empty while the pipe is open; else why it closed and the end of Chromium's log.
    func describeEnd() -> String {
        condition.lock()
        defer { condition.unlock() }
        return ending == nil ? "" : "; " + endedMessage()
    }

    private func logTail() -> String {
        guard let data = FileManager.default.contents(atPath: logPath), !data.isEmpty else { return "" }
        // Without a D-Bus (containers, CI) Chromium logs a dozen harmless D-Bus errors: skip them.
        let lines = String(decoding: data.suffix(20_000), as: UTF8.self).split(separator: "\n")
            .filter { !$0.contains(":ERROR:dbus/") && !$0.contains("unexpected operator") }
        return lines.isEmpty ? "" : "\nchromium's log ends:\n" + lines.suffix(15).joined(separator: "\n")
    }
}
