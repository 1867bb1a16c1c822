import CMoonLua
import CMoonLuaShim
#if canImport(Glibc)
import Glibc
#endif
import MoonreelEngine
import MoonreelScriptHost

/// `av.readCSV` and `av.readCues`: timed text in (CSV, LRC, SRT, WebVTT, ASS/SSA); and
/// `av.files`, the files of a folder, for batch jobs.
extension API {
    static let cueListMetatable = "moonreel.CueList"

    var cueFunctions: [AVFunction] {
        [
            ("files", "av.files(folder [, pattern]): the files in folder whose names match a shell pattern (\"*.mov\"; default \"*\"), as folder/name paths in natural order (clip2 before clip10); not subfolders, not hidden files", { call in
                let folder = try call.filePath(1)
                let pattern = try call.optionalString(2) ?? "*"
                guard FileSystem.kind(of: folder) == .directory else {
                    throw call.argumentError(1, "\(folder.quotedForMessage()) is not a folder")
                }
                let prefix = folder.hasSuffix("/") ? folder : folder + "/"
                let names = FileSystem.entries(of: folder).filter { name in
                    (!name.hasPrefix(".") || pattern.hasPrefix(".")) && fnmatch(pattern, name, 0) == 0
                        && FileSystem.kind(of: prefix + name) == .file
                }
                call.pushArray(names.sorted(by: API.naturalOrder)) { call.push(prefix + $0) }
                return 1
            }),
            ("readCSV", "av.readCSV(path): array of rows keyed by the header (quoted fields, UTF-8, BOM)", { call in
                let api = try call.api()
                let path = try call.filePath(1)
                api.readFiles.record(path)
                let table = try api.timedText(call) { try CSVReader.read(path: path) }
                call.pushArray(table.rows) { row in
                    call.pushRecord { for (key, value) in row { call.push(value); call.setField(key) } }
                }
                return 1
            }),
            ("readCues", "av.readCues(path [, {format=, duration=, strict=}]): cues {text=, start=, finish=, id=, translation=, file=, line= (where it was read), words={text=, start=, finish=, firstCharacter=, lastCharacter=, sweeps=}} from CSV, LRC, SRT, WebVTT or ASS/SSA; a bad block is dropped, and overlapping cues and cues past `duration` noted (strict = true: the error) (docs/timed-text.md)", { call in
                let api = try call.api()
                let path = try call.filePath(1)
                api.readFiles.record(path)
                var format: CueFormat? = nil
                var total: MediaTime? = nil
                var strict = false
                if !call.isNoneOrNil(2) {
                    guard call.type(2) == LUA_TTABLE else { throw call.typeError(2, expected: "table {format=, duration=, strict=}") }
                    try call.forEachField(of: 2) { key in
                        do {
                            switch key {
                            case "format": format = try call.choice(call.absolute(-1), CueFormat.self)
                            case "duration": total = try call.duration(call.absolute(-1))
                            case "strict": strict = try call.boolean(-1)
                            default: throw call.argumentError(2, "unknown readCues option \(key.quotedForMessage()) (format, duration, strict)")
                            }
                        } catch let error as LuaArgumentError where ["format", "duration", "strict"].contains(key) {
                            // The option's own check numbers the value's stack slot; name the table and field.
                            throw call.argumentError(2, "field '\(key)': \(error.message.argumentReason)", cause: error)
                        }
                    }
                }
                var log = CueLog(strict: strict)
                let cues = try api.timedText(call) { try CueReader.read(path: path, format: format, totalDuration: total, log: &log) }
                for note in log.notes { try api.policy.report(note, at: call.L) }
                if cues.isEmpty {
                    try api.policy.report(Diagnostic(.cuesEmpty, .warning, "\(path) holds no cue: no line of it will be shown",
                                                 remedy: "check that it is the right file and not empty"), at: call.L)
                }
                let problems = CueCheck.problems(in: cues, duration: total, file: path)
                if strict, let first = problems.first { throw LuaArgumentError("\(call.functionName): \(first.text)") }
                for problem in problems { try api.policy.report(problem, at: call.L) }
                api.policy.cuesRead?(cues)
                api.policy.cueListsRead += 1
                call.pushArray(cues) { cue in
                    call.pushRecord {
                        call.push(cue.text); call.setField("text")
                        call.push(cue.start.seconds); call.setField("start")
                        call.push(cue.end.seconds); call.setField("finish")
                        if let id = cue.identifier { call.push(id); call.setField("id") }
                        if let source = cue.source { call.push(source.file); call.setField("file"); call.push(source.line); call.setField("line") }
                        if let translation = cue.translation { call.push(translation); call.setField("translation") }
                        call.pushArray(cue.words) { word in
                            call.pushRecord {
                                call.push(word.text); call.setField("text")
                                call.push(word.start.seconds); call.setField("start")
                                call.push(word.end.seconds); call.setField("finish")
                                call.push(word.scalars.lowerBound); call.setField("firstCharacter")
                                call.push(word.scalars.upperBound); call.setField("lastCharacter")
                                call.push(word.sweeps); call.setField("sweeps")
                            }
                        }
                        call.setField("words")
                    }
                }
                _ = moon_getmetatable_named(call.L, API.cueListMetatable)
                lua_setmetatable(call.L, -2)
                return 1
            }),
        ]
    }

    /// The methods of `av.readCues`'s lists (the cues stay plain tables).
    func installCueListMetatable() {
        installMethods(API.cueListMetatable, [("remapped", "cues:remapped", { call in try call.api().remapped(call) })])
    }

    /// `cues:remapped(map)`: a new list with each cue (and its words) where the edit that made
    /// `map` moved it: the part of it that was kept, from its first kept moment to the end of
    /// its last. A cue wholly inside removed time is left out, with a note naming it.
    private func remapped(_ call: LuaCall) throws -> Int32 {
        guard call.type(1) == LUA_TTABLE else { throw call.typeError(1, expected: "a cue list (call it as cues:remapped(map))") }
        let map: TimeMapBox = try call.object(2, TimeMapBox.self)
        let L = call.L
        var leftOut: [String] = [], moved: [Cue] = []
        lua_createtable(L, Int32(min(call.rawLength(1), 1 << 20)), 0)                    // list
        let list = lua_gettop(L)
        for index in 0..<call.rawLength(1) {
            defer { lua_settop(L, list) }
            guard call.pushElement(of: 1, index + 1) == LUA_TTABLE else { throw call.argumentError(1, "cue \(index + 1) is not a table") }
            let cue = lua_gettop(L)
            if let copy = try movedCopy(call, of: cue, through: map.map, label: "cue \(index + 1)") {
                if let drawn = Self.cue(L, copy) { moved.append(drawn) }
                if lua_getfield(L, cue, "words") == LUA_TTABLE {                   // … copy words
                    let words = lua_gettop(L)
                    lua_createtable(L, Int32(min(call.rawLength(words), 1 << 20)), 0)
                    var kept: lua_Integer = 0
                    for position in 0..<call.rawLength(words) {
                        guard call.pushElement(of: words, position + 1) == LUA_TTABLE else { throw call.argumentError(1, "word \(position + 1) of cue \(index + 1) is not a table") }
                        if try movedCopy(call, of: lua_gettop(L), through: map.map, label: "word \(position + 1) of cue \(index + 1)") != nil {
                            kept += 1
                            lua_rawseti(L, -3, kept)                                   // … copy words word
                        }
                        call.pop()
                    }
                    lua_setfield(L, copy, "words")
                }
                call.pop()                                                           // list cue copy
                lua_rawseti(L, list, lua_Integer(lua_rawlen(L, list)) + 1)
            } else {
                leftOut.append(Self.cueName(L, cue, index: index + 1))
            }
        }
        _ = moon_getmetatable_named(L, API.cueListMetatable)
        lua_setmetatable(L, list)
        policy.cueListsRemapped += 1
        policy.cuesRemapped?(moved)
        if !leftOut.isEmpty {
            let named = leftOut.prefix(3).joined(separator: ", ") + (leftOut.count > 3 ? " and \(leftOut.count - 3) more" : "")
            try policy.report(Diagnostic(.cueDropped, .note, "\(named) \(leftOut.count == 1 ? "lies" : "lie") wholly in time the edit removed: left out"), at: L)
        }
        return 1
    }

    /// A copy of the cue or word table at `index` with its start and finish moved through
    /// `map`, pushed, and its stack index; nil (nothing pushed) when all of it was removed.
    private func movedCopy(_ call: LuaCall, of index: Int32, through map: TimeMap, label: String) throws -> Int32? {
        let L = call.L
        let seconds = { (field: String) throws -> MediaTime in
            defer { call.pop() }
            guard lua_getfield(L, index, field) == LUA_TNUMBER, let time = MediaTime(seconds: lua_tonumberx(L, -1, nil)), !time.isNegative else {
                throw call.argumentError(1, "\(label) has no \(field) in seconds (0 or more)")
            }
            return time
        }
        let (start, finish) = (try seconds("start"), try seconds("finish"))
        guard let moved = map.map(TimeRange(from: start, to: MediaTime.max(start, finish))) else { return nil }
        lua_createtable(L, 0, 8)
        lua_pushnil(L)
        while lua_next(L, index) != 0 {                                               // copy key value
            lua_pushvalue(L, -2)
            moon_insert(L, -2)
            lua_rawset(L, -4)
        }
        call.push(seconds: moved.start)
        lua_setfield(L, -2, "start")
        call.push(seconds: moved.end)
        lua_setfield(L, -2, "finish")
        return lua_gettop(L)
    }

    /// The cue a (moved) cue table describes: its text, times and where it was read.
    private static func cue(_ L: OpaquePointer, _ table: Int32) -> Cue? {
        let number = { (field: String) -> Double? in
            defer { moon_pop(L, 1) }
            return lua_getfield(L, table, field) == LUA_TNUMBER ? lua_tonumberx(L, -1, nil) : nil
        }
        let text = { (field: String) -> String? in
            defer { moon_pop(L, 1) }
            return lua_getfield(L, table, field) == LUA_TSTRING ? LuaState.string(L, at: -1) : nil
        }
        guard let start = number("start").flatMap({ MediaTime(seconds: $0) }), let end = number("finish").flatMap({ MediaTime(seconds: $0) }) else { return nil }
        var cue = Cue(text: text("text") ?? "", start: start, end: end, identifier: text("id"))
        if let file = text("file"), let line = number("line") { cue.source = SourceLine(file: file, line: Int(line)) }
        return cue
    }

    /// "cue 3 (\"Hello\", episode.srt:12)" for a note.
    private static func cueName(_ L: OpaquePointer, _ cue: Int32, index: Int) -> String {
        let field = { (name: String) -> String? in
            defer { moon_pop(L, 1) }
            return lua_getfield(L, cue, name) == LUA_TSTRING || lua_type(L, -1) == LUA_TNUMBER ? LuaState.string(L, at: -1) : nil
        }
        let text = field("text").map { $0.quotedForMessage(limit: 40) }
        let place = field("file").flatMap { file in field("line").map { "\(file):\($0)" } }
        let details = [text, place].compactMap { $0 }.joined(separator: ", ")
        return "cue \(index)" + (details.isEmpty ? "" : " (\(details))")
    }

    /// Timed-text errors already name the file and line; raise them as they are.
    private func timedText<T>(_ call: LuaCall, _ body: () throws -> T) throws -> T {
        do { return try body() } catch let error as TimedTextError {
            throw LuaArgumentError("\(call.functionName): \(error.description)", kind: error.kind.rawValue, subject: error.file)
        }
    }

    /// "clip2" before "clip10": runs of digits compare as numbers, the rest as text.
    static func naturalOrder(_ a: String, _ b: String) -> Bool {
        var left = Substring(a), right = Substring(b)
        while let l = left.first, let r = right.first {
            if l.isASCII && l.isNumber && r.isASCII && r.isNumber {
                let leftDigits = left.prefix { $0.isASCII && $0.isNumber }, rightDigits = right.prefix { $0.isASCII && $0.isNumber }
                let leftValue = leftDigits.drop { $0 == "0" }, rightValue = rightDigits.drop { $0 == "0" }
                if leftValue.count != rightValue.count { return leftValue.count < rightValue.count }
                if leftValue != rightValue { return leftValue < rightValue }
                left = left.dropFirst(leftDigits.count)
                right = right.dropFirst(rightDigits.count)
            } else {
                if l != r { return l < r }
                left = left.dropFirst()
                right = right.dropFirst()
            }
        }
        return left.count < right.count
    }
}

extension Binding {
    static let cues = Binding(functions: { $0.cueFunctions }, install: { $0.installCueListMetatable() })
}
