import CMoonLua
import CMoonLuaShim
import MoonreelEngine
import MoonreelScriptHost

/// A capture session as scripts see it: the engine's session and the script's callbacks,
/// which run on the script's thread while it waits in `wait()` or `stopRecording()`.
final class ScriptCaptureSession {
    let session = CaptureSession()
    /// Registry references of the callback functions, by event name.
    var callbacks: [String: Int32] = [:]

    /// A script that ends (or drops the session) while recording still gets a finished file.
    deinit {
        if session.status == .recording { session.stopRecording() }
    }
}

/// `av.captureDevices(type)`, `av.captureDevice(id)` and `av.captureSession()`
/// (AVCaptureDevice, AVCaptureSession with an AVCaptureMovieFileOutput).
extension API {
    static let captureEvents = ["onStarted", "onFinished", "onError"]

    func makeCaptureDeviceClass() -> LuaClass {
        let luaClass = LuaClass("CaptureDevice", doc: "A camera, screen or microphone that a capture session records.")
        luaClass.describe = { object in
            guard let d = object as? CaptureDevice else { return "CaptureDevice" }
            return "CaptureDevice(\(d.uniqueID), \(d.mediaType.rawValue))"
        }
        luaClass.property("uniqueID", of: CaptureDevice.self, doc: "\"backend:name\", e.g. \"lavfi:testsrc2\", \"v4l2:/dev/video0\"") { call, d in call.push(d.uniqueID) }
        luaClass.property("localizedName", of: CaptureDevice.self, doc: "a name for people, e.g. \"Virtual camera (testsrc2)\"") { call, d in call.push(d.localizedName) }
        luaClass.property("backend", of: CaptureDevice.self, doc: CaptureBackend.allCases.map(\.rawValue).joined(separator: ", ")) { call, d in call.push(d.backend.rawValue) }
        luaClass.property("mediaType", of: CaptureDevice.self, doc: "\"video\" or \"audio\"") { call, d in call.push(d.mediaType.rawValue) }
        luaClass.property("formats", of: CaptureDevice.self, doc: "array of {width=, height=, pixelFormat=, frameRateRanges={{min, max}…}} or {sampleRate=, channels=}") { call, d in
            call.pushArray(d.formats) { call.push(captureFormat: $0) }
        }
        luaClass.property("activeFormat", of: CaptureDevice.self, doc: "the format it records in (set with format{})") { call, d in
            if let format = d.activeFormat { call.push(captureFormat: format) } else { call.pushNil() }
        }
        luaClass.property("activeFrameRate", of: CaptureDevice.self, doc: "frames per second it records at (video)") { call, d in
            if d.mediaType == .video { call.push(d.recordingFormat.frameRate) } else { call.pushNil() }
        }
        luaClass.method("format", of: CaptureDevice.self,
                        doc: "device:format{width=, height=, frameRate=} (video) or {sampleRate=, channels=} (audio): picks the format to record in and returns it; an error lists the formats there are") { call, d in
            let table: Int32 = 2
            guard call.type(table) == LUA_TTABLE else { throw call.typeError(table, expected: "table {width=, height=, frameRate=} or {sampleRate=, channels=}") }
            let known = d.mediaType == .video ? ["width", "height", "frameRate"] : ["sampleRate", "channels"]
            try call.forEachField(of: table) { key in
                guard known.contains(key) else {
                    throw call.argumentError(table, "unknown \(d.mediaType.rawValue) format field \(key.quotedForMessage()) (known: \(known.joined(separator: ", ")))")
                }
            }
            func integer(_ name: String) throws -> Int? { try call.field(table, name, 0) { try call.integer(-1) } }
            let format = try call.engine {
                try d.selectFormat(width: try integer("width"), height: try integer("height"),
                                   frameRate: try call.field(table, "frameRate", 0) { try call.finite(-1) },
                                   sampleRate: try integer("sampleRate"), channels: try integer("channels"))
            }
            call.push(captureFormat: format)
            return 1
        }
        luaClass.example = """
            local camera = av.captureDevice("lavfi:testsrc2")
            camera:format{ width = 1280, height = 720, frameRate = 60 }
            """
        return luaClass
    }

    func makeCaptureSessionClass() -> LuaClass {
        let luaClass = LuaClass("CaptureSession", doc: "Records cameras, screens and microphones to a movie file (docs/recording.md).")
        luaClass.describe = { object in
            guard let s = object as? ScriptCaptureSession else { return "CaptureSession" }
            return "CaptureSession(\(s.session.inputs.map(\.uniqueID).joined(separator: ", ")), \(s.session.status.rawValue))"
        }
        luaClass.property("inputs", of: ScriptCaptureSession.self) { call, s in
            try call.pushArray(s.session.inputs) { try call.push($0) }
        }
        luaClass.property("presetName", of: ScriptCaptureSession.self, doc: "export preset that encodes the recording (default MediumQuality)",
                          get: { call, s in call.push(s.session.preset?.name ?? "MediumQuality") },
                          set: { call, s, index in
                              let name = try call.string(index)
                              guard let preset = ExportPreset.named(AppleNames.presetName(name)), preset.video != nil, !preset.isSmartCut else {
                                  let usable = ExportPreset.all.filter { $0.video != nil && !$0.isSmartCut }.map(\.name)
                                  throw call.argumentError(index, "preset \(name.quotedForMessage()) cannot record (use one of \(usable.joined(separator: ", ")))")
                              }
                              s.session.preset = preset
                          })
        luaClass.property("overwrite", of: ScriptCaptureSession.self, doc: "replace an existing output (once the recording is finished)",
                          get: { call, s in call.push(s.session.overwrite) },
                          set: { call, s, index in s.session.overwrite = try call.boolean(index) })
        for event in API.captureEvents {
            luaClass.property(event, of: ScriptCaptureSession.self, doc: "", get: { call, s in
                if let reference = s.callbacks[event] { lua_rawgeti(call.L, MOON_LUA_REGISTRYINDEX, lua_Integer(reference)) } else { call.pushNil() }
            }, set: { call, s, index in
                guard call.type(index) == LUA_TFUNCTION || call.isNoneOrNil(index) else { throw call.typeError(index, expected: "function or nil") }
                if let old = s.callbacks.removeValue(forKey: event) { luaL_unref(call.L, MOON_LUA_REGISTRYINDEX, old) }
                guard !call.isNoneOrNil(index) else { return }
                call.pushValue(index)
                s.callbacks[event] = luaL_ref(call.L, MOON_LUA_REGISTRYINDEX)
            })
        }
        luaClass.property("status", of: ScriptCaptureSession.self, doc: "waiting, recording, finished or failed") { call, s in call.push(s.session.status.rawValue) }
        luaClass.property("error", of: ScriptCaptureSession.self) { call, s in if let e = s.session.error { call.push(e.message) } else { call.pushNil() } }
        luaClass.method("addInput", of: ScriptCaptureSession.self, doc: "session:addInput(device): one camera or screen and one microphone") { call, s in
            let device: CaptureDevice = try call.object(2, CaptureDevice.self)
            try call.engine { try s.session.addInput(device) }
            return 0
        }
        luaClass.method("startRecording", of: ScriptCaptureSession.self,
                        doc: "session:startRecording(path, {maxDuration=, maxFileSize=}): starts writing a fragmented MP4 and returns; true, or nil and a message") { call, s in
            let api = try call.api()
            let path = try call.filePath(2)
            if !call.isNoneOrNil(3) {
                guard call.type(3) == LUA_TTABLE else { throw call.typeError(3, expected: "table {maxDuration=, maxFileSize=}") }
                try call.forEachField(of: 3) { key in
                    guard key == "maxDuration" || key == "maxFileSize" else {
                        throw call.argumentError(3, "unknown recording option \(key.quotedForMessage()) (known: maxDuration, maxFileSize)")
                    }
                }
                s.session.maxDuration = try call.field(3, "maxDuration", 0) { try call.duration(-1) }
                s.session.maxFileSize = try call.field(3, "maxFileSize", 0) { () throws -> Int64 in
                    let bytes = try call.integer(-1)
                    guard bytes >= 256 * 1024 else { throw call.argumentError(-1, "maxFileSize must be at least 262144 bytes, got \(bytes)") }
                    return Int64(bytes)
                }
            }
            guard !api.policy.dryRun else {
                call.pushNil()
                call.push(LuaState.scriptPosition(call.L) + "startRecording does nothing in a dry run (nothing was recorded)")
                return 2
            }
            if api.policy.overwriteOutputs { s.session.overwrite = true }
            s.session.strict = api.policy.strict
            s.session.readFiles = api.readFiles
            s.session.parentCancellation = api.exportCancellation
            do {
                try s.session.startRecording(to: path)
            } catch {
                call.pushNil()
                call.pushError(error, at: LuaState.scriptPosition(call.L))
                return 2
            }
            // Only notes and (without strict) warnings are left: a strict session refused to start on a warning.
            for diagnostic in s.session.diagnostics { try api.policy.report(diagnostic, at: call.L) }
            call.push(true)
            return 1
        }
        luaClass.method("wait", of: ScriptCaptureSession.self,
                        doc: "session:wait(): runs the callbacks as the recording goes and returns when it ends (maxDuration, maxFileSize): the summary, or nil and a message") { call, s in
            try call.api().finishRecording(call, s)
        }
        luaClass.method("stopRecording", of: ScriptCaptureSession.self,
                        doc: "session:stopRecording(): stops, finishes the file and moves it into place: the summary, or nil and a message") { call, s in
            let api = try call.api()
            s.session.requestStop()
            return try api.finishRecording(call, s)
        }
        luaClass.document([
            "inputs": "the devices added with addInput",
            "error": "why the recording failed (one line), or nil",
            "onStarted": "function(path), called when recording starts",
            "onFinished": "function(summary), called when the file is in place; summary = {path=, duration=, videoFrames=, droppedVideoFrames=, audioSamples=, droppedAudioSamples=, fileSize=, reason=} (reason: stopped, maxDuration, maxFileSize)",
            "onError": "function(message, kind), called when recording fails",
        ])
        luaClass.example = """
            local session = av.captureSession()
            session:addInput(av.captureDevice("lavfi:testsrc2"))
            session:addInput(av.captureDevice("lavfi:sine"))
            session.onFinished = function(summary) print(summary.duration, summary.droppedVideoFrames) end
            assert(session:startRecording("take.mp4", { maxDuration = 5 }))
            local summary = assert(session:wait())
            """
        return luaClass
    }

    /// Waits for the recording to end, calling the script's callbacks for each event on
    /// this thread; returns the summary, or nil and the message.
    private func finishRecording(_ call: LuaCall, _ s: ScriptCaptureSession) throws -> Int32 {
        guard s.session.status != .waiting else { throw LuaArgumentError("\(call.functionName): the session is not recording (call startRecording first)") }
        let position = LuaState.scriptPosition(call.L)
        var failure: ExportError? = nil
        var summary: CaptureSummary? = nil
        while let event = s.session.nextEvent() {
            switch event {
            case .started(let path):
                try callBack(call, s, "onStarted") { call.push(path) }
            case .finished(let result):
                summary = result
                try callBack(call, s, "onFinished") { call.push(summary: result) }
            case .failed(let error):
                failure = error
                try callBack(call, s, "onError") { call.push(error.message); call.push(error.kind.rawValue) }
            }
        }
        s.session.waitUntilFinished()
        summary = summary ?? s.session.summary
        if let failure = failure ?? s.session.error {
            call.pushNil()
            call.push(position + failure.message.oneLine)
            return 2
        }
        guard let summary else {
            call.pushNil()
            call.push(position + "the recording ended without a result")
            return 2
        }
        for diagnostic in summary.diagnostics { try policy.report(diagnostic, at: call.L) }
        call.push(summary: summary)
        return 1
    }

    /// Calls the `event` callback, if set, with the values `arguments` pushes.
    private func callBack(_ call: LuaCall, _ s: ScriptCaptureSession, _ event: String, _ arguments: () -> Void) throws {
        guard let reference = s.callbacks[event] else { return }
        let base = lua_gettop(call.L)
        lua_rawgeti(call.L, MOON_LUA_REGISTRYINDEX, lua_Integer(reference))
        arguments()
        do {
            try lua.call(argumentCount: lua_gettop(call.L) - base - 1, resultCount: 0)
        } catch {
            // The recording goes on being finished; the script's error is raised after.
            s.session.requestStop()
            s.session.waitUntilFinished()
            throw error
        }
    }


    /// Capture opens devices and writes files: none of it is reachable from an effect.
    private func checkNotSandboxed(_ call: LuaCall) throws {
        guard !lua.isSandboxed else { throw LuaArgumentError("\(call.functionName): effects cannot record") }
    }

    var captureFunctions: [AVFunction] {
        [("captureDevices", "av.captureDevices(\"video\" | \"audio\"): the cameras and screens, or the microphones (lavfi virtual ones always)", { call in
            let api = try call.api()
            try api.checkNotSandboxed(call)
            let type = try call.choice(1, CaptureMediaType.self)
            let listing = CaptureDevices.listing(type)
            for problem in listing.problems { try api.policy.report(Diagnostic(.fileNotAsExpected, .note, problem), at: call.L) }
            try call.pushArray(listing.devices) { try call.push($0) }
            return 1
         }),
         ("captureDevice", "av.captureDevice(uniqueID): the device with this ID (e.g. \"lavfi:testsrc2\", \"v4l2:/dev/video0\"), or the default \"video\" or \"audio\" device", { call in
            let api = try call.api()
            try api.checkNotSandboxed(call)
            let id = try call.string(1)
            let device = try call.engine { () throws -> CaptureDevice in
                if let type = CaptureMediaType(rawValue: id) {
                    guard let first = CaptureDevices.list(type).first else { throw EngineError("there is no \(id) capture device", kind: .notFound) }
                    return first
                }
                return try CaptureDevices.device(id)
            }
            try call.push(device)
            return 1
         }),
         ("captureSession", "av.captureSession(): a session that records its inputs to a movie file", { call in
            let api = try call.api()
            try api.checkNotSandboxed(call)
            try call.push(ScriptCaptureSession())
            return 1
         })]
    }
}

private extension LuaCall {
    func push(captureFormat format: CaptureFormat) {
        pushRecord {
            if format.mediaType == .video {
                push(format.width); setField("width")
                push(format.height); setField("height")
                push(format.pixelFormat); setField("pixelFormat")
                pushArray(format.frameRateRanges) { range in
                    pushArray([range.minimum, range.maximum]) { push($0) }
                }
                setField("frameRateRanges")
            } else {
                push(format.sampleRate); setField("sampleRate")
                push(format.channels); setField("channels")
            }
            push(format.description); setField("description")
        }
    }

    func push(summary: CaptureSummary) {
        pushRecord {
            push(summary.path); setField("path")
            push(summary.duration.seconds); setField("duration")
            push(Int(summary.videoFrames)); setField("videoFrames")
            push(Int(summary.droppedVideoFrames)); setField("droppedVideoFrames")
            push(Int(summary.audioSamples)); setField("audioSamples")
            push(Int(summary.droppedAudioSamples)); setField("droppedAudioSamples")
            push(Int(summary.fileSize)); setField("fileSize")
            push(summary.reason.rawValue); setField("reason")
        }
    }
}

extension Binding {
    static let capture = Binding(classes: [.init(CaptureDevice.self) { $0.makeCaptureDeviceClass() },
                                         .init(ScriptCaptureSession.self) { $0.makeCaptureSessionClass() }],
                               functions: { $0.captureFunctions })
}
