import CMoonLua
import CMoonLuaShim
import MoonreelEngine
import MoonreelScriptHost

/// The export session's writer settings (AVAssetWriterInput's output settings) and its size
/// limit: `session.videoSettings = { codec = "vp9", crf = 32 }`, `session.fileLengthLimit`.
extension API {
    func addWriterSettings(to luaClass: LuaClass) {
        settingsProperty(luaClass, "videoSettings", \.videoSettings,
                         doc: "{codec=\"h264\"|\"hevc\"|\"prores\"|\"vp9\"|\"av1\", crf= or qp= (constant quantizer) or bitRate= (bits/s), preset=\"medium\", profile=, "
                            + "pixelFormat=\"yuv420p\"|\"yuv420p10le\"|\"yuv422p10le\"|\"yuv444p10le\", keyframeInterval= (s), maxBitRate=, bufferSize=, deterministic=true (h264: the same frames every run)}; "
                            + "unset keys inherit the preset (docs/export-settings.md)",
                         read: { try $0.api().videoSettings($0, $1) }, push: { (call, settings: VideoSettings) in try call.api().push(call, settings: settings) },
                         check: { try $0.checkSettings(video: $1, audio: nil) })
        settingsProperty(luaClass, "audioSettings", \.audioSettings,
                         doc: "{codec=\"aac\"|\"opus\"|\"flac\"|\"pcm\"|\"mp3\", bitRate= (bits/s), sampleRate= (Hz), channels=1|2}; unset keys inherit",
                         read: { try $0.api().audioSettings($0, $1) }, push: { (call, settings: AudioSettings) in try call.api().push(call, settings: settings) },
                         check: { try $0.checkSettings(video: nil, audio: $1) })
        luaClass.property("fileLengthLimit", of: ExportSession.self,
                          doc: "most bytes the output may take (nil: no limit); the export ends cleanly before the next packet would pass it",
                          get: { call, e in if let limit = e.fileLengthLimit { call.push(Int(limit)) } else { call.pushNil() } },
                          set: { call, e, index in
                              guard !call.isNoneOrNil(index) else { e.fileLengthLimit = nil; return }
                              let bytes = try call.integer(index)
                              guard (32_768...(1 << 50)).contains(bytes) else {
                                  throw call.argumentError(index, "fileLengthLimit must be a number of bytes from 32768 (room for a header and an index), got \(bytes)")
                              }
                              e.fileLengthLimit = Int64(bytes)
                          })
        luaClass.property("estimatedOutputFileLength", of: ExportSession.self,
                          doc: "bytes the output is expected to take, from the bit rates or a rough figure for constant quality (nil: unknown)") { call, e in
            if let bytes = e.estimatedOutputFileLength { call.push(Int(bytes)) } else { call.pushNil() }
        }
        luaClass.property("maxDuration", of: ExportSession.self,
                          doc: "seconds of output expected to fit in fileLengthLimit (the whole range without a limit; nil: unknown)") { call, e in
            if let seconds = e.maxDuration?.seconds { call.push(seconds) } else { call.pushNil() }
        }
        luaClass.property("stoppedBy", of: ExportSession.self,
                          doc: "why a completed export ended before the end of its range: \"fileLengthLimit\", or nil when it wrote all of it") { call, e in
            if let reason = e.stoppedBy { call.push(reason.rawValue) } else { call.pushNil() }
        }
        luaClass.property("outputDuration", of: ExportSession.self, doc: "seconds written, once the export has completed") { call, e in
            if let seconds = e.outputDuration?.seconds { call.push(seconds) } else { call.pushNil() }
        }
    }

    /// A settings table property: read and checked when set (the engine's refusals become
    /// the setter's argument error), given back as the table of the keys that were set.
    private func settingsProperty<Settings>(_ luaClass: LuaClass, _ name: String, _ keyPath: ReferenceWritableKeyPath<ExportSession, Settings?>,
                                            doc: String, read: @escaping (LuaCall, Int32) throws -> Settings?,
                                            push: @escaping (LuaCall, Settings) throws -> Void,
                                            check: @escaping (ExportSession, Settings) throws -> Void) {
        luaClass.property(name, of: ExportSession.self, doc: doc,
                          get: { call, e in if let settings = e[keyPath: keyPath] { try push(call, settings) } else { call.pushNil() } },
                          set: { call, e, index in
                              let settings = try read(call, index)
                              if let settings {
                                  do { try check(e, settings) } catch let error as EngineError { throw call.argumentError(index, error.message, cause: error) }
                              }
                              e[keyPath: keyPath] = settings
                          })
    }

    private func videoSettings(_ call: LuaCall, _ index: Int32) throws -> VideoSettings? {
        guard !call.isNoneOrNil(index) else { return nil }
        var settings = VideoSettings()
        try readSettings(call, index, table: "videoSettings", keys: VideoSettings.keys) { key in
            switch key {
            case "codec": settings.codec = try named(call, key, VideoSettings.Codec.self)
            case "crf": settings.crf = try whole(call, key)
            case "qp": settings.qp = try whole(call, key)
            case "bitRate": settings.bitRate = try whole(call, key)
            case "maxBitRate": settings.maxBitRate = try whole(call, key)
            case "bufferSize": settings.bufferSize = try whole(call, key)
            case "preset": settings.preset = try settingText(call, key)
            // ProRes profiles read as numbers too: profile = 4444.
            case "profile": settings.profile = call.type(-1) == LUA_TNUMBER ? String(try whole(call, key)) : try settingText(call, key)
            case "pixelFormat": settings.pixelFormat = try named(call, key, VideoSettings.PixelFormat.self)
            case "deterministic": settings.deterministic = try call.boolean(-1)
            default: settings.keyframeInterval = try settingSeconds(call, key)
            }
        }
        return settings
    }

    private func audioSettings(_ call: LuaCall, _ index: Int32) throws -> AudioSettings? {
        guard !call.isNoneOrNil(index) else { return nil }
        var settings = AudioSettings()
        try readSettings(call, index, table: "audioSettings", keys: AudioSettings.keys) { key in
            switch key {
            case "codec": settings.codec = try named(call, key, AudioSettings.Codec.self)
            case "bitRate": settings.bitRate = try whole(call, key)
            case "sampleRate": settings.sampleRate = try whole(call, key)
            default: settings.channels = try whole(call, key)
            }
        }
        return settings
    }

    /// Calls `read` for each key of the table at `index` (its value on top), refusing keys
    /// it does not know with the nearest known one.
    private func readSettings(_ call: LuaCall, _ index: Int32, table: String, keys: [String], read: (String) throws -> Void) throws {
        guard call.type(index) == LUA_TTABLE else { throw call.typeError(index, expected: "table of \(table)") }
        try call.forEachField(of: index) { key in
            guard keys.contains(key) else {
                let hint = NameSuggestion.closest(to: key, among: keys).map { "; did you mean \($0)?" }
                throw call.argumentError(index, "unknown \(table) key \(key.quotedForMessage())" + (hint ?? " (known: \(keys.joined(separator: ", ")))"))
            }
            do { try read(key) } catch let error as LuaArgumentError { throw call.argumentError(index, error.message, cause: error) }
        }
    }

    // Readers of the value on top of the stack; their errors name the key.

    private func whole(_ call: LuaCall, _ key: String) throws -> Int {
        guard call.type(-1) == LUA_TNUMBER, let value = try? call.integer(-1) else {
            throw LuaArgumentError("\(key) must be a whole number, got \(describeTop(call))")
        }
        return value
    }

    private func settingText(_ call: LuaCall, _ key: String) throws -> String {
        guard call.type(-1) == LUA_TSTRING else { throw LuaArgumentError("\(key) must be a string, got \(call.typeName(-1))") }
        return try call.string(-1)
    }

    private func named<T: RawRepresentable & CaseIterable>(_ call: LuaCall, _ key: String, _ type: T.Type) throws -> T where T.RawValue == String {
        let name = try settingText(call, key)
        guard let value = T(rawValue: name) else {
            throw LuaArgumentError("\(key) must be one of \(T.allCases.map { "\"\($0.rawValue)\"" }.joined(separator: ", ")), got \(name.quotedForMessage())")
        }
        return value
    }

    private func settingSeconds(_ call: LuaCall, _ key: String) throws -> Double {
        do { return try call.time(-1).seconds } catch let error as LuaArgumentError {
            throw LuaArgumentError("\(key): \(error.message.argumentReason)")
        }
    }

    private func describeTop(_ call: LuaCall) -> String {
        call.type(-1) == LUA_TNUMBER ? format((try? call.number(-1)) ?? .nan) : call.typeName(-1)
    }

    private func push(_ call: LuaCall, settings: VideoSettings) {
        call.pushRecord {
            if let codec = settings.codec { call.push(codec.rawValue); call.setField("codec") }
            if let crf = settings.crf { call.push(crf); call.setField("crf") }
            if let qp = settings.qp { call.push(qp); call.setField("qp") }
            if let bitRate = settings.bitRate { call.push(bitRate); call.setField("bitRate") }
            if let preset = settings.preset { call.push(preset); call.setField("preset") }
            if let profile = settings.profile { call.push(profile); call.setField("profile") }
            if let format = settings.pixelFormat { call.push(format.rawValue); call.setField("pixelFormat") }
            if let interval = settings.keyframeInterval { call.push(interval); call.setField("keyframeInterval") }
            if let maxBitRate = settings.maxBitRate { call.push(maxBitRate); call.setField("maxBitRate") }
            if let bufferSize = settings.bufferSize { call.push(bufferSize); call.setField("bufferSize") }
            if let deterministic = settings.deterministic { call.push(deterministic); call.setField("deterministic") }
        }
    }

    private func push(_ call: LuaCall, settings: AudioSettings) {
        call.pushRecord {
            if let codec = settings.codec { call.push(codec.rawValue); call.setField("codec") }
            if let bitRate = settings.bitRate { call.push(bitRate); call.setField("bitRate") }
            if let rate = settings.sampleRate { call.push(rate); call.setField("sampleRate") }
            if let channels = settings.channels { call.push(channels); call.setField("channels") }
        }
    }
}
