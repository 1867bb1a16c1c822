import Foundation
import MoonreelEngine
import MoonreelPlatform

/// A Slurm job script, and the one way Moonreel writes one. Every path and value in it is
/// quoted for whoever reads that line: `#SBATCH` directives as sbatch reads them (double
/// quotes, backslash escapes), commands as sh reads them (single quotes). A value holding a
/// line break or a NUL is refused: it would end a comment or a directive and start a
/// command of its own.
public struct JobScript: Sendable, Equatable {
    /// Comments and `#SBATCH` directives: sbatch reads directives only before the first command.
    private var header = ["#!/bin/sh"]
    private var body: [String] = []

    /// An empty script: `#!/bin/sh` alone.
    public init() {}

    /// The script's text, as `write` writes it.
    public var text: String { (header + body + [""]).joined(separator: "\n") }

    /// `value`, if a job script can carry it; `what` names it in the refusal.
    public static func checked(_ value: String, _ what: @autoclosure () -> String) throws -> String {
        // Scalars, not Characters: "\r\n" is one Character, equal to neither "\r" nor "\n".
        let lineEnds: Set<Unicode.Scalar> = ["\n", "\r", "\0", "\u{0B}", "\u{0C}", "\u{85}", "\u{2028}", "\u{2029}"]
        guard !value.unicodeScalars.contains(where: lineEnds.contains) else {
            throw BatchError("\(what()) \(value.quotedForMessage(limit: 200)) holds a line break or a NUL, which a Slurm job script cannot carry; rename it")
        }
        return value
    }

    /// One word for sh: inside single quotes, nothing is expanded.
    public static func shellWord(_ word: String) throws -> String {
        "'" + (try checked(word, "a value")).replacingOccurrences(of: "'", with: "'\\''") + "'"
    }

    /// A directive's value for sbatch, which splits `#SBATCH` lines at spaces unless quoted
    /// and takes a backslash as an escape everywhere.
    public static func directiveWord(_ value: String) throws -> String {
        "\"" + (try checked(value, "a value")).replacingOccurrences(of: "\\", with: "\\\\").replacingOccurrences(of: "\"", with: "\\\"") + "\""
    }

    /// `# text`.
    public mutating func comment(_ text: String) throws {
        header.append("# " + (try Self.checked(text, "a comment")))
    }

    /// `#SBATCH --option="value"`; directives go before the first command.
    public mutating func directive(_ option: String, _ value: String) throws {
        header.append("#SBATCH --\(option)=" + (try Self.directiveWord(value)))
    }

    /// The words of a command line, each quoted, after `prefix` (shell code of Moonreel's own,
    /// such as `exec` or a `case` label) and before `suffix` (its own code again).
    package mutating func command(_ words: [String], prefix: String = "", suffix: String = "") throws {
        body.append(prefix + (try words.map(Self.shellWord).joined(separator: " ")) + suffix)
    }

    /// `#SBATCH --option` or `#SBATCH --option=value` unquoted, for Moonreel's own values
    /// (a job name, an array's range): literals and numbers, never a user's value.
    package mutating func ownDirective(_ option: String, _ value: String? = nil) {
        header.append("#SBATCH --" + option + (value.map { "=" + $0 } ?? ""))
    }

    /// Shell code of Moonreel's own: literals and numbers, never a user's value.
    package mutating func code(_ line: String) {
        body.append(line)
    }

    /// The job's output and errors go to `prefix` + the array task's index + `suffix` (or to
    /// `prefix` alone, for a job that is no array). The script opens its log itself: Slurm's
    /// `--output` reads `%` and `\` in a path as its own symbols, which a folder name may hold.
    public mutating func log(to prefix: String, eachTaskSuffix suffix: String? = nil) throws {
        ownDirective("output", "/dev/null")
        let path = try Self.shellWord(prefix) + (try suffix.map { "\"$SLURM_ARRAY_TASK_ID\"" + (try Self.shellWord($0)) } ?? "")
        body.insert("exec >" + path + " 2>&1", at: 0)
    }

    /// The script, written whole (a temporary file renamed over an earlier attempt's).
    public func write(to path: String) throws {
        do {
            try Paths.writeFile(text, to: path, replacing: true)
        } catch {
            throw BatchError("cannot write the job script \(path): \(error)")
        }
    }
}
