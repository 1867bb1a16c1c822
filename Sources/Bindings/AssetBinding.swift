import CMoonLua
import MoonreelEngine
import MoonreelScriptHost

/// `av.asset(path)` and asset tracks (AVURLAsset, AVAssetTrack).
extension API {
    func makeAssetClass() -> LuaClass {
        let luaClass = LuaClass("Asset", doc: "A media file: duration, url and tracks.")
        luaClass.describe = { object in
            guard let asset = object as? Asset else { return "Asset" }
            let kinds = asset.tracks.map(\.mediaType.rawValue).joined(separator: ", ")
            return "Asset(\"\(asset.path)\", \(format(asset.duration.seconds)) s, tracks: \(kinds))"
        }
        luaClass.property("duration", of: Asset.self, doc: "seconds") { call, a in call.push(seconds: a.duration) }
        luaClass.property("durationTime", of: Asset.self, doc: "exact duration") { call, a in try call.push(exact: a.duration) }
        luaClass.property("url", of: Asset.self, doc: "the file's path") { call, a in call.push(a.path) }
        luaClass.property("tracks", of: Asset.self, doc: "every track") { call, a in
            try call.pushArray(a.tracks) { try call.push($0) }
        }
        luaClass.property("metadata", of: Asset.self, doc: "container tags") { call, a in
            call.pushRecord { for (key, value) in a.metadata { call.push(value); call.setField(key) } }
        }
        luaClass.property("startTimecode", of: Asset.self, doc: "the first frame's timecode label (\"01:00:00:00\", \";\" before the frames when drop-frame), from a camera's timecode track; nil when the file has none, or no video") { call, a in
            if let timecode = a.startTimecode { call.push(timecode.description) } else { call.pushNil() }
        }
        luaClass.method("tracksWithMediaType", of: Asset.self, readOnly: true, doc: "asset:tracksWithMediaType(\"video\"): array, maybe empty") { call, a in
            let type = try call.mediaType(2)
            try call.pushArray(a.tracks(withMediaType: type)) { try call.push($0) }
            return 1
        }
        luaClass.method("trackWithTrackID", of: Asset.self, readOnly: true, doc: "asset:trackWithTrackID(id) or nil") { call, a in
            if let track = a.track(withID: try call.integer(2)) { try call.push(track) } else { call.pushNil() }
            return 1
        }
        luaClass.example = """
            local asset = av.asset("clip.mov")            -- or a photo: av.asset("photo.jpg")
            print(asset.duration, #asset.tracks)
            local video = asset:tracksWithMediaType("video")[1]   -- nil when there is none
            """
        return luaClass
    }

    func makeAssetTrackClass() -> LuaClass {
        let luaClass = LuaClass("AssetTrack", doc: "One stream of an asset.")
        luaClass.describe = { object in
            guard let t = object as? AssetTrack else { return "AssetTrack" }
            let detail = t.mediaType == .video ? " \(t.naturalSize) \(format((t.nominalFrameRate * 100).rounded() / 100)) fps"
                : t.mediaType == .audio ? " \(t.sampleRate) Hz \(t.channelCount) ch" : ""
            return "AssetTrack(#\(t.trackID) \(t.mediaType.rawValue) \(t.codec)\(detail))"
        }
        luaClass.property("mediaType", of: AssetTrack.self) { call, t in call.push(t.mediaType.rawValue) }
        luaClass.property("trackID", of: AssetTrack.self) { call, t in call.push(t.trackID) }
        luaClass.property("timeRange", of: AssetTrack.self) { call, t in try call.push(range: t.timeRange) }
        luaClass.property("naturalSize", of: AssetTrack.self, doc: "stored size, before the preferred transform") { call, t in call.push(size: t.naturalSize) }
        luaClass.property("preferredTransform", of: AssetTrack.self, doc: "maps the stored frame upright, top-left at (0, 0)") { call, t in
            try call.push(transform: t.preferredTransform)
        }
        luaClass.property("nominalFrameRate", of: AssetTrack.self) { call, t in call.push(t.nominalFrameRate) }
        luaClass.property("fieldOrder", of: AssetTrack.self,
                          doc: "video: \"progressive\", \"top field first\" or \"bottom field first\" (interlaced: deinterlaced when drawn), \"unknown\" when the file does not say") { call, t in
            call.push(t.fieldOrder.rawValue)
        }
        luaClass.property("nominalFrameDuration", of: AssetTrack.self,
                          doc: "video: one frame at the rate the file stands for, exactly (av.time(1001, 30000) at 29.97 fps; a phone's variable rate averaging 29.98 is 29.97), as a default video composition renders it: the frameDuration that shows each picture once (where a variable-rate clip's pictures come closer than that, some are left out) and keeps a camera's timecode; nil for other tracks") { call, t in
            guard t.mediaType == .video else { call.pushNil(); return }
            try call.push(exact: VideoComposition.frameDuration(forRate: t.nominalFrameRate))
        }
        luaClass.property("naturalTimeScale", of: AssetTrack.self) { call, t in call.push(Int(t.naturalTimeScale)) }
        luaClass.property("codec", of: AssetTrack.self) { call, t in call.push(t.codec) }
        luaClass.property("isPortrait", of: AssetTrack.self) { call, t in call.push(t.isPortrait) }
        luaClass.property("pixelAspectRatio", of: AssetTrack.self, doc: "the stored pixels' width over their height: 1 but for anamorphic video (PAL DV 16:9: 64/45 ≈ 1.42)") { call, t in
            call.push(t.pixelAspectRatio)
        }
        luaClass.property("shownSize", of: AssetTrack.self, doc: "{width, height} the picture shows: upright, non-square pixels at their shape (PAL DV 16:9: 1024×576)") { call, t in
            call.push(size: t.shownSize)
        }
        luaClass.property("sampleRate", of: AssetTrack.self) { call, t in call.push(t.sampleRate) }
        luaClass.property("channelCount", of: AssetTrack.self) { call, t in call.push(t.channelCount) }
        luaClass.property("color", of: AssetTrack.self, doc: "video: {bitDepth=, primaries=, transfer=, matrix=, range=, hdr= \"HLG\" | \"PQ\" | nil, dolbyVision=, hdr10Plus= true | nil, masteringLuminance= {max=, min=} (cd/m²), maxCLL=, maxFALL=}; nil for other tracks; HDR10's values nil when the file gives none") { call, t in
            guard let color = t.color else { call.pushNil(); return }
            call.pushRecord {
                call.push(color.bitDepth); call.setField("bitDepth")
                for (name, value) in [("primaries", color.primaries), ("transfer", color.transfer), ("matrix", color.matrix), ("range", color.range)] {
                    call.push(value); call.setField(name)
                }
                if let hdr = color.hdr { call.push(hdr.rawValue); call.setField("hdr") }
                if let dolbyVision = color.dolbyVision { call.push(dolbyVision); call.setField("dolbyVision") }
                if color.hdr10Plus { call.push(true); call.setField("hdr10Plus") }
                if let display = color.hdrMetadata?.masteringDisplay {
                    call.pushRecord {
                        call.push(Double(display.maxLuminance) / 10_000); call.setField("max")
                        call.push(Double(display.minLuminance) / 10_000); call.setField("min")
                    }
                    call.setField("masteringLuminance")
                }
                if let light = color.hdrMetadata?.contentLightLevel {
                    call.push(light.maxContent); call.setField("maxCLL")
                    call.push(light.maxFrameAverage); call.setField("maxFALL")
                }
            }
        }
        luaClass.property("asset", of: AssetTrack.self) { call, t in
            if let owner = t.asset { try call.push(owner) } else { call.pushNil() }
        }
        luaClass.document([
            "mediaType": "\"video\", \"audio\", \"subtitle\", \"text\", \"image\" (cover art) or \"metadata\"",
            "trackID": "the container's track ID (1-based in MP4 and MOV)",
            "timeRange": "where this track has media, in the asset's time (tracks of one file rarely end together)",
            "nominalFrameRate": "frames per second as the file states it (variable-rate video: the average)",
            "naturalTimeScale": "units per second of the track's timestamps",
            "codec": "codec name, e.g. \"h264\", \"hevc\", \"aac\"",
            "isPortrait": "true when the upright picture is taller than wide",
            "sampleRate": "audio samples per second (0 for video)",
            "channelCount": "audio channels (0 for video)",
            "asset": "the asset the track belongs to",
        ])
        luaClass.example = """
            local track = av.asset("phone.mov"):tracksWithMediaType("video")[1]
            print(track.naturalSize.width, track.isPortrait, track.preferredTransform)
            """
        return luaClass
    }

    var assetFunctions: [AVFunction] {
        [
            ("asset", "av.asset(path [, {try = true}]): open a media file; with try = true a file that cannot be opened (missing, truncated, not media) gives nil, the one-line message and the error's kind (\"notFound\", \"decode\"…) instead of an error, for batch jobs that skip it", { call in
                let api = try call.api()
                let path = try call.filePath(1)
                var tries = false
                if !call.isNoneOrNil(2) {
                    guard call.type(2) == LUA_TTABLE else { throw call.typeError(2, expected: "table {try=}") }
                    try call.forEachField(of: 2) { key in
                        guard key == "try" else { throw call.argumentError(2, "unknown asset option \(key.quotedForMessage()) (known: try)") }
                        tries = try call.boolean(-1)
                    }
                }
                api.readFiles.record(path)
                do {
                    try call.push(try Asset(path: path))
                    return 1
                } catch {
                    let message = "\(error)".oneLine
                    guard tries else { throw call.argumentError(1, message, cause: error) }
                    call.pushNil()
                    call.push(LuaState.scriptPosition(call.L) + message)
                    call.push((error as? KindedError)?.errorKindName ?? EngineError.Kind.internal.rawValue)
                    return 3
                }
            }),
        ]
    }
}

extension Binding {
    static let asset = Binding(classes: [.init(AssetTrack.self) { $0.makeAssetTrackClass() }, .init(Asset.self) { $0.makeAssetClass() }],
                             functions: { $0.assetFunctions })
}
