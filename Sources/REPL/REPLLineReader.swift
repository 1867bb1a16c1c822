// libedit's settings are C globals; only the REPL thread touches them (see below).
@preconcurrency import CMoonEdit
#if canImport(Glibc)
import Glibc
#endif

/// What reading one line of REPL input gave.
enum REPLInput: Equatable {
    case line(String)
    /// Ctrl-C at the prompt: drop what was typed.
    case interrupted
    /// Ctrl-D on an empty line, or the end of piped input.
    case end
}

protocol REPLLineReader: AnyObject {
    func read(prompt: String) -> REPLInput
    /// Adds an entry (a whole statement, even one typed over several lines) to the history.
    func remember(_ entry: String)
}

/// Waits until stdin or the wakeup descriptor is readable; false means a wakeup (Ctrl-C).
private func waitForInput(wakeDescriptor: Int32, consumeWakeup: () -> Bool) -> Bool {
    var fds = [pollfd(fd: STDIN_FILENO, events: Int16(POLLIN), revents: 0),
               pollfd(fd: wakeDescriptor, events: Int16(POLLIN), revents: 0)]
    while true {
        let ready = poll(&fds, 2, -1)
        if ready < 0 && errno == EINTR { continue }
        if fds[1].revents & Int16(POLLIN) != 0, consumeWakeup() { return false }
        return true
    }
}

/// Input that is not a terminal (a pipe, a file): plain lines, no prompt, no history.
final class PipedLineReader: REPLLineReader {
    private let signals: REPLSignals
    private var pending: [UInt8] = []
    private var atEnd = false

    init(signals: REPLSignals) { self.signals = signals }

    func read(prompt: String) -> REPLInput {
        while true {
            if let newline = pending.firstIndex(of: UInt8(ascii: "\n")) {
                let line = String(decoding: pending[..<newline], as: UTF8.self)
                pending.removeSubrange(...newline)
                return .line(line)
            }
            if atEnd {
                guard !pending.isEmpty else { return .end }
                defer { pending = [] }
                return .line(String(decoding: pending, as: UTF8.self))
            }
            guard waitForInput(wakeDescriptor: signals.wakeDescriptor, consumeWakeup: signals.consumeWakeup) else {
                return .interrupted
            }
            var buffer = [UInt8](repeating: 0, count: 4096)
            let count = Glibc.read(STDIN_FILENO, &buffer, buffer.count)
            if count > 0 {
                pending += buffer[..<count]
            } else if count == 0 || errno != EINTR {
                atEnd = true
            }
        }
    }

    func remember(_ entry: String) {}
}

// libedit calls plain C function pointers without a context argument, so what they need
// lives here. Only the thread that runs the REPL (the one calling `readline`) touches these.
nonisolated(unsafe) private var editorSignals: REPLSignals?
nonisolated(unsafe) private var editorCancelled = false
nonisolated(unsafe) private var editorCompleter: ((String) -> [String])?
nonisolated(unsafe) private var editorMatches: [String] = []
nonisolated(unsafe) private var editorNextMatch = 0

/// The key our character source returns for a Ctrl-C at the prompt (Ctrl-C's own code,
/// which the terminal turns into SIGINT and so never delivers itself).
private let cancelKey: Int32 = 3

/// A terminal: libedit's readline with history kept in a file and Lua-aware completion.
/// Characters come from our own source, which also watches the signal thread's wakeup, so
/// a Ctrl-C at the prompt ends the line being edited (libedit's own signal handling would
/// re-raise SIGINT to the whole process group instead).
final class TerminalLineReader: REPLLineReader {
    private var history: REPLHistory?
    /// Every entry, for rewriting the file when it grows too long.
    private var entries: [String] = []
    private var historyWarningShown = false

    init(signals: REPLSignals, historyPath: String?, completer: @escaping (String) -> [String]) {
        history = historyPath.map(REPLHistory.init(path:))
        editorSignals = signals
        editorCompleter = completer
        // Multibyte input needs a UTF-8 character type; "C" would show "é" as two bytes.
        if setlocale(LC_CTYPE, "") == nil || !String(cString: nl_langinfo(nl_item(CODESET))).uppercased().contains("UTF") {
            setlocale(LC_CTYPE, "C.UTF-8")
        }
        rl_catch_signals = 0
        rl_getc_function = { _ in readEditorCharacter() }
        rl_initialize()
        _ = rl_add_defun("moonreel-cancel-line", { _, _ in
            editorCancelled = true
            rl_done = 1
            return 0
        }, cancelKey)
        // '.', ':' and brackets are not word breaks, so "comp:ins" and "vc.instructions[1].la"
        // are completed as one word.
        rl_completer_word_break_characters = strdup(" \t\n\"'`@$><=;|&{(,+-*/%^~#")
        rl_completion_append_character = 0
        rl_attempted_completion_function = { text, _, _ in
            rl_attempted_completion_over = 1
            guard let text else { return nil }
            editorMatches = editorCompleter?(String(cString: text)) ?? []
            guard !editorMatches.isEmpty else { return nil }
            return rl_completion_matches(text) { _, state in
                if state == 0 { editorNextMatch = 0 }
                guard editorNextMatch < editorMatches.count else { return nil }
                defer { editorNextMatch += 1 }
                return strdup(editorMatches[editorNextMatch])
            }
        }
        using_history()
        stifle_history(Int32(REPLHistory.limit))
        entries = history?.load() ?? []
        for entry in entries.suffix(REPLHistory.limit) { add_history(entry) }
    }

    func read(prompt: String) -> REPLInput {
        editorCancelled = false
        fflush(nil)
        guard let raw = readline(prompt) else {
            // readline ends the line without a newline of its own on Ctrl-C and Ctrl-D.
            writeREPLOutput(editorCancelled ? "^C\n" : "\n")
            return editorCancelled ? .interrupted : .end
        }
        defer { free(raw) }
        return .line(String(cString: raw))
    }

    func remember(_ entry: String) {
        guard !entry.isEmpty else { return }
        add_history(entry)
        guard var file = history else { return }
        entries.append(entry)
        if !file.append(entry, keeping: { entries }), !historyWarningShown {
            historyWarningShown = true
            reportREPLError("moonreel: cannot write the history file \(file.path)")
        }
        if entries.count > REPLHistory.limit * 2 { entries = Array(entries.suffix(REPLHistory.limit)) }
        history = file
    }
}

/// One character for libedit: a Unicode scalar decoded from stdin's UTF-8 (libedit takes
/// the value as a wide character), `cancelKey` after a Ctrl-C, or -1 at the end of input.
private func readEditorCharacter() -> Int32 {
    guard let signals = editorSignals else { return -1 }
    guard waitForInput(wakeDescriptor: signals.wakeDescriptor, consumeWakeup: signals.consumeWakeup) else {
        return cancelKey
    }
    func nextByte() -> Int32? {
        var byte: UInt8 = 0
        while true {
            let count = read(STDIN_FILENO, &byte, 1)
            if count == 1 { return Int32(byte) }
            if count < 0 && errno == EINTR { continue }
            return nil
        }
    }
    guard let first = nextByte() else { return -1 }
    let continuationCount = first >= 0xF0 ? 3 : first >= 0xE0 ? 2 : first >= 0xC0 ? 1 : 0
    var scalar = continuationCount == 0 ? first : first & (0x3F >> continuationCount)
    for _ in 0..<continuationCount {
        guard let next = nextByte() else { return -1 }
        scalar = scalar << 6 | (next & 0x3F)
    }
    return scalar
}

/// Error lines go to stderr directly (after stdout's buffered text, to keep the order).
func reportREPLError(_ message: String) {
    writeREPLOutput(message + "\n", to: STDERR_FILENO)
}

/// Writes past C's shared FILE buffers (not Sendable), flushing them first to keep the order.
func writeREPLOutput(_ text: String, to descriptor: Int32 = STDOUT_FILENO) {
    fflush(nil)
    var text = text
    text.withUTF8 { bytes in _ = write(descriptor, bytes.baseAddress, bytes.count) }
}
