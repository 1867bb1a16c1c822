import ArgumentParser
import MoonreelBindings
import MoonreelEngine
import MoonreelPlatform
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
