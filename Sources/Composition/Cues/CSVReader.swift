/// A CSV file read with its header: `rows[i][name]` is the field of column `name`.
public struct CSVTable: Sendable, Hashable {
    /// The column names from the first record, trimmed of white space, each unique.
    public let header: [String]
    /// One dictionary per record after the header, from column name to field (fields are
    /// not trimmed; quotes are removed).
    public let rows: [[String: String]]
    /// The file line on which each row starts (rows may span lines inside quotes).
    public let rowLines: [Int]
}

/// RFC 4180 CSV: fields separated by commas, records by CRLF or LF; a quoted field may
/// hold commas, line breaks and doubled quotes (`""`). UTF-8 with or without a BOM.
/// Empty lines are skipped. Written here rather than taken from SwiftCSV, which needs
/// Foundation (startup time).
public enum CSVReader {
    /// Reads and parses the CSV file at `path` (at most 64 MB).
    /// - Throws: `TimedTextError` with file and line when the file cannot be read, is not
    ///   UTF-8, is empty, names a column twice, has a row with the wrong number of fields,
    ///   or has a malformed quoted field.
    public static func read(path: String) throws -> CSVTable {
        try parse(TextFile.read(path), fileName: path)
    }

    /// A file's contents already in memory; `fileName` names it in errors.
    public static func parse(bytes: [UInt8], fileName: String) throws -> CSVTable {
        try parse(TextFile.decode(bytes, fileName: fileName), fileName: fileName)
    }

    /// Parses CSV text already decoded; `fileName` names it in errors. `badRow` hears of each
    /// row with the wrong number of fields (left out when it returns; by default the first is
    /// thrown), so every problem of a file can be listed.
    /// - Throws: `TimedTextError` as `read(path:)`.
    public static func parse(_ text: String, fileName: String, badRow: (TimedTextError) throws -> Void = { throw $0 }) throws -> CSVTable {
        let records = try records(in: TextFile.withoutByteOrderMark(text), fileName: fileName)
        guard let headerRecord = records.first else { throw TimedTextError(file: fileName, line: 1, "is empty: a header row is needed") }
        let header = headerRecord.fields.map { String($0.trimmed) }
        var seen = Set<String>()
        for name in header where !seen.insert(name).inserted {
            throw TimedTextError(file: fileName, line: headerRecord.line, "the header names column \"\(name)\" twice")
        }
        var rows: [[String: String]] = [], lines: [Int] = []
        for record in records.dropFirst() {
            guard record.fields.count == header.count else {
                let problem = TimedTextError(file: fileName, line: record.line,
                                             "row has \(record.fields.count) fields but the header has \(header.count)"
                                             + (record.fields.count > header.count ? " (a comma in a field needs the field in double quotes)" : ""))
                try badRow(problem)
                continue
            }
            rows.append(Dictionary(uniqueKeysWithValues: zip(header, record.fields)))
            lines.append(record.line)
        }
        return CSVTable(header: header, rows: rows, rowLines: lines)
    }

    private static let quote = UInt8(ascii: "\""), comma = UInt8(ascii: ","),
                       carriageReturn = UInt8(ascii: "\r"), lineFeed = UInt8(ascii: "\n")

    /// The records of the text with the line each starts on. Works on UTF-8 bytes: every
    /// delimiter is ASCII, so fields split there are whole UTF-8 sequences.
    static func records(in text: String, fileName: String) throws -> [(fields: [String], line: Int)] {
        let bytes = Array(text.utf8)
        var records: [(fields: [String], line: Int)] = []
        var fields: [String] = [], field: [UInt8] = []
        var fieldWasQuoted = false
        var line = 1, recordLine = 1
        var i = 0
        func endField() {
            fields.append(String(decoding: field, as: UTF8.self))
            field = []
            fieldWasQuoted = false
        }
        func endRecord() {
            let isEmptyLine = fields.isEmpty && field.isEmpty && !fieldWasQuoted
            endField()
            if !isEmptyLine { records.append((fields, recordLine)) }
            fields = []
        }
        while i < bytes.count {
            let byte = bytes[i]
            if byte == quote, field.isEmpty, !fieldWasQuoted {
                let openingLine = line
                i += 1
                while true {
                    guard i < bytes.count else {
                        throw TimedTextError(file: fileName, line: openingLine, "a quoted field is not closed (missing \")")
                    }
                    let inner = bytes[i]
                    i += 1
                    if inner == quote {
                        guard i < bytes.count, bytes[i] == quote else { break }
                        i += 1
                    } else if inner == lineFeed || (inner == carriageReturn && (i == bytes.count || bytes[i] != lineFeed)) {
                        line += 1
                    }
                    field.append(inner)
                }
                fieldWasQuoted = true
                if i < bytes.count, ![comma, carriageReturn, lineFeed].contains(bytes[i]) {
                    throw TimedTextError(file: fileName, line: line, "unexpected text after a closing quote (write \"\" for a quote inside a field)")
                }
                continue
            }
            switch byte {
            case comma:
                endField()
            case carriageReturn, lineFeed:
                if byte == carriageReturn, i + 1 < bytes.count, bytes[i + 1] == lineFeed { i += 1 }
                endRecord()
                line += 1
                recordLine = line
            default:
                field.append(byte)
            }
            i += 1
        }
        if !fields.isEmpty || !field.isEmpty || fieldWasQuoted { endRecord() }
        return records
    }
}
