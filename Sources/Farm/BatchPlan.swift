import Foundation
import MoonreelEngine
import MoonreelPlatform

/// A batch failure said before or instead of rendering (one line, or a list with row numbers).
public struct BatchError: Error, Equatable {
    /// What went wrong, for people.
    public let message: String
    /// A failure saying `message`.
    public init(_ message: String) { self.message = message }
}

/// The options of `moonreel run` that every task of a batch or a chunked render gets from
/// the command that planned it.
public struct RunOptions: Sendable, Equatable {
    /// `--memory-limit`, in MiB.
    public var memoryLimit: Int
    /// `--time-limit`, in seconds.
    public var timeLimit: Double?
    /// `--overwrite`.
    public var overwrite: Bool
    /// `--strict`.
    public var strict: Bool

    /// The options as given.
    public init(memoryLimit: Int, timeLimit: Double? = nil, overwrite: Bool = false, strict: Bool = false) {
        (self.memoryLimit, self.timeLimit, self.overwrite, self.strict) = (memoryLimit, timeLimit, overwrite, strict)
    }

    /// The options as words: the memory limit, then `progress` (a task's own `--progress`,
    /// if it has one there), the time limit and the flags.
    public func arguments(progress: String? = nil) -> [String] {
        var words = ["--memory-limit", String(memoryLimit)]
        if let progress { words += ["--progress", progress] }
        if let timeLimit { words += ["--time-limit", String(timeLimit)] }
        if overwrite { words.append("--overwrite") }
        if strict { words.append("--strict") }
        return words
    }
}

/// What a batch will run: each row's parameter values and output, checked for clashes.
public struct BatchPlan: Sendable {
    /// One row of the batch: one run of the template.
    public struct Row: Sendable, Equatable {
        /// 1-based, as people count data rows (the header is not one).
        public let number: Int
        /// The file the row writes.
        public let output: String
        /// `--set` values: the row's columns that the template declares, and `output`.
        public let values: [String: String]

        /// A row as given.
        public init(number: Int, output: String, values: [String: String]) {
            (self.number, self.output, self.values) = (number, output, values)
        }

        /// The words after `moonreel run` that make this row: its values as `--set`, in
        /// name order, then `--` and the template.
        public func runArguments(template: String) -> [String] {
            values.sorted { $0.key < $1.key }.flatMap { ["--set", "\($0.key)=\($0.value)"] } + ["--", template]
        }
    }

    /// The template every row runs.
    public let template: String
    /// The rows, in the order of the rows file.
    public let rows: [Row]

    /// Plans a batch. `declared` are the template's parameter names, in its order; `records`
    /// reads the rows file (`rowsFile`, named in messages) once the parameters are checked;
    /// `pattern` (`--out`) names each row's output from its columns; `shared` are `--set`
    /// values for every row, which a row's own column of the same name overrides.
    public init(template: String, declared: [String], rowsFile: String, records: () throws -> [[String: String]],
                pattern: String, shared: [String: String] = [:]) throws {
        self.template = template
        guard declared.contains("output") else {
            throw BatchError("\(template) declares no parameter \"output\"; a batch template takes its output from --out (add { name = \"output\", type = \"string\", required = true } to its av.parameters)")
        }
        let names = Set(declared)
        if let unknown = shared.keys.sorted().first(where: { !names.contains($0) || $0 == "output" }) {
            throw BatchError(unknown == "output" ? "--set output: each row's output comes from --out"
                             : "--set \(unknown): \(template) declares no parameter \(unknown) (it declares \(declared.joined(separator: ", ")))")
        }
        var problems: [String] = []
        var rows: [Row] = []
        var owners: [String: Int] = [:]
        for (index, record) in try records().enumerated() {
            let number = index + 1
            do {
                let output = try Self.output(pattern, record)
                if let first = owners[Paths.absolute(output)] {
                    problems.append("rows \(first) and \(number) both write \(output)")
                    continue
                }
                owners[Paths.absolute(output)] = number
                var values = shared.merging(record.filter { names.contains($0.key) && $0.key != "output" }) { _, row in row }
                values["output"] = output
                rows.append(Row(number: number, output: output, values: values))
            } catch let error as BatchError {
                problems.append("row \(number): \(error.message)")
            }
        }
        guard problems.isEmpty else { throw BatchError("\(problems.count) problem\(problems.count == 1 ? "" : "s") before anything ran:\n  " + problems.joined(separator: "\n  ")) }
        guard !rows.isEmpty else { throw BatchError("\(rowsFile) has no rows") }
        self.rows = rows
    }

    /// `pattern` with each `{column}` replaced by the row's value. A value with a slash (or
    /// a NUL) is refused: a row cannot send its output to another folder.
    public static func output(_ pattern: String, _ record: [String: String]) throws -> String {
        var output = ""
        var rest = Substring(pattern)
        while let open = rest.firstIndex(of: "{") {
            output += rest[..<open]
            guard let close = rest[open...].firstIndex(of: "}") else { throw BatchError("--out has a { without }") }
            let name = String(rest[rest.index(after: open)..<close])
            guard let value = record[name] else {
                throw BatchError("--out names column {\(name)}, which this row does not have (columns: \(record.keys.sorted().joined(separator: ", ")))")
            }
            guard !value.isEmpty, !value.contains("/"), !value.contains("\0"), value != ".", value != ".." else {
                throw BatchError("column \(name) is \(value.quotedForMessage()), which cannot be part of a file name")
            }
            output += value
            rest = rest[rest.index(after: close)...]
        }
        return output + rest
    }
}
