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
    /// What the batch as a whole leaves out: columns that reach no row (a mistyped
    /// parameter name is a warning: every row gets the parameter's default instead).
    public let diagnostics: [RowDiagnostic]

    /// Plans a batch. `declared` are the template's parameter names, in its order; `records`
    /// reads the rows file (`rowsFile`, named in messages) once the parameters are checked;
    /// `pattern` (`--out`) names each row's output from its columns; `shared` are `--set`
    /// values for every row, which a row's own column of the same name overrides;
    /// `suggest` names the parameter a column not declared was likely meant to be, among those
    /// no column or `--set` gives. A row's empty cell gives nothing: the row gets the `--set`
    /// value or the template's default (`defaults`: each declared one, as written in messages),
    /// or, for a `required` parameter, fails as the template says ("is required and is empty").
    public init(template: String, declared: [String], rowsFile: String, records: () throws -> [[String: String]],
                pattern: String, shared: [String: String] = [:], defaults: [String: String] = [:], required: Set<String> = [],
                suggest: (String, [String]) -> String? = { _, _ in nil }) throws {
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
        var emptyCells: [String: [Int]] = [:]
        var owners: [String: Int] = [:]
        let records = try records()
        for (index, record) in records.enumerated() {
            let number = index + 1
            do {
                let output = try Self.output(pattern, record)
                if let first = owners[Paths.absolute(output)] {
                    problems.append("rows \(first) and \(number) both write \(output)")
                    continue
                }
                owners[Paths.absolute(output)] = number
                let given = record.filter { names.contains($0.key) && $0.key != "output" }
                // A required one is passed empty, which the template refuses by name.
                let empty = given.filter { !required.contains($0.key) && $0.value.allSatisfy(\.isWhitespace) }.keys
                for column in empty { emptyCells[column, default: []].append(number) }
                var values = shared.merging(given.filter { !empty.contains($0.key) }) { _, row in row }
                values["output"] = output
                rows.append(Row(number: number, output: output, values: values))
            } catch let error as BatchError {
                problems.append("row \(number): \(error.message)")
            }
        }
        guard problems.isEmpty else { throw BatchError("\(problems.count) problem\(problems.count == 1 ? "" : "s") before anything ran:\n  " + problems.joined(separator: "\n  ")) }
        guard !rows.isEmpty else { throw BatchError("\(rowsFile) has no rows") }
        self.rows = rows
        diagnostics = Self.unusedColumns(records, declared: declared, shared: shared, pattern: pattern, template: template,
                                         rowsFile: rowsFile, suggest: suggest)
            + Self.emptyCells(emptyCells, shared: shared, defaults: defaults, rowsFile: rowsFile)
    }

    /// For each column with empty cells, what those rows get instead: the `--set` value or
    /// the default (a note), or nothing at all (a warning: a name left out of a row rendered
    /// an empty title, "done"). An empty cell was passed as "", which drew empty text where
    /// the template declares a default, and was refused for a number.
    private static func emptyCells(_ cells: [String: [Int]], shared: [String: String], defaults: [String: String], rowsFile: String) -> [RowDiagnostic] {
        cells.sorted { $0.key < $1.key }.map { column, rows in
            let listed = rows.prefix(5).map(String.init).joined(separator: ", ") + (rows.count > 5 ? " and \(rows.count - 5) more" : "")
            let place = "column \(column.quotedForMessage()) is empty in row\(rows.count == 1 ? "" : "s") \(listed) of \(rowsFile)"
            let (level, outcome): (String, String)
            if let value = shared[column] {
                (level, outcome) = ("note", "so \(rows.count == 1 ? "it gets" : "they get") --set \(column)=\(value)")
            } else if let value = defaults[column] {
                (level, outcome) = ("note", "so \(rows.count == 1 ? "it gets" : "they get") \(column)'s default, \(value)")
            } else {
                (level, outcome) = ("warning", "and \(column) has no default: \(rows.count == 1 ? "that row renders" : "those rows render") without it (fill the cells, or give \(column) a default)")
            }
            return RowDiagnostic(event: ["level": level, "kind": Diagnostic.Kind.optionIgnored.rawValue, "message": "\(place), \(outcome)"])
        }
    }

    /// A warning for each column that is no parameter and not in `pattern` but near the name
    /// of a parameter nothing gives (a header's `Title` for `title`), or for each row where
    /// it is near a parameter that row does not give, and one note naming the other columns
    /// no row uses.
    private static func unusedColumns(_ records: [[String: String]], declared: [String], shared: [String: String], pattern: String,
                                      template: String, rowsFile: String, suggest: (String, [String]) -> String?) -> [RowDiagnostic] {
        let columns = Set(records.flatMap(\.keys))
        let unused = columns.subtracting(declared).subtracting(patternColumns(pattern)).sorted()
        let ungiven = declared.filter { $0 != "output" && shared[$0] == nil && !columns.contains($0) }
        // A column's place is the header (line 1); a JSON row's line is not known, its message names it.
        let diagnostic = { (level: String, message: String, atHeader: Bool) -> RowDiagnostic in
            var event: [String: Any] = ["level": level, "kind": Diagnostic.Kind.optionIgnored.rawValue, "message": message]
            if atHeader { (event["file"], event["line"]) = (rowsFile, 1) }
            return RowDiagnostic(event: event)
        }
        var diagnostics: [RowDiagnostic] = []
        var unmatched: [String] = []
        var meantInRows: Set<String> = []
        for column in unused {
            if let meant = suggest(column, ungiven) {
                diagnostics.append(diagnostic("warning", "column \(column.quotedForMessage()) is no parameter of \(template) and no row gives \(meant), "
                                              + "so every row gets \(meant)'s default; did you mean \(meant)? (rename the column)", true))
                continue
            }
            // A key only some rows misspell (JSON rows each have their own keys): those rows
            // get the default of a parameter the others give.
            for (index, record) in records.enumerated() where record[column] != nil {
                let missing = declared.filter { $0 != "output" && shared[$0] == nil && record[$0] == nil && !ungiven.contains($0) }
                guard let meant = suggest(column, missing) else { continue }
                meantInRows.insert(column)
                diagnostics.append(diagnostic("warning", "row \(index + 1) of \(rowsFile): \(column.quotedForMessage()) is no parameter of \(template) and the row gives no \(meant), "
                                              + "so it gets \(meant)'s default; did you mean \(meant)? (rename it in that row)", false))
            }
            if !meantInRows.contains(column) { unmatched.append(column) }
        }
        if !unmatched.isEmpty {
            let list = unmatched.map { $0.quotedForMessage() }.joined(separator: ", ")
            diagnostics.append(diagnostic("note", "column\(unmatched.count == 1 ? "" : "s") \(list) \(unmatched.count == 1 ? "is" : "are") no parameter of \(template) "
                                          + "(it declares \(declared.joined(separator: ", "))) and not in --out: no row uses \(unmatched.count == 1 ? "it" : "them")", true))
        }
        return diagnostics
    }

    /// The columns `pattern` names in braces.
    private static func patternColumns(_ pattern: String) -> Set<String> {
        Set(pattern.split(separator: "{", omittingEmptySubsequences: false).dropFirst().compactMap { part in
            part.firstIndex(of: "}").map { String(part[..<$0]) }
        })
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
