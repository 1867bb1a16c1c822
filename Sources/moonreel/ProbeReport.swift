import MoonreelEngine
import MoonreelScriptHost
import MoonreelBindings

/// `moonreel probe`: what the engine sees in a file, as text or JSON.
enum ProbeReport {
    static func text(_ asset: Asset) -> String {
        let timecode = asset.startTimecode.map { ", timecode \($0) (\($0.dropFrame ? "drop-frame" : "non-drop"), \(framesPerSecond($0.frameDuration)) fps)" } ?? ""
        var lines = ["\(asset.path): \(asset.formatName), \(String(format3: asset.duration.seconds)) s\(timecode)"]
        for track in asset.tracks {
            var line = "  #\(track.trackID) \(track.mediaType.rawValue) \(track.codec)"
            switch track.mediaType {
            case .video, .image:
                line += " \(track.naturalSize) \(track.pixelFormat)"
                if track.mediaType == .video { line += " \(rounded(track.nominalFrameRate, 3)) fps" }
                if track.fieldOrder.isInterlaced { line += ", interlaced (\(track.fieldOrder.rawValue))" }
                if !track.preferredTransform.isIdentity {
                    line += ", shown \(track.shownSize) (preferredTransform \(track.preferredTransform))"
                } else if track.shownSize != track.naturalSize {
                    line += ", shown \(track.shownSize) (pixels \(rounded(track.pixelAspectRatio, 3)) times as wide as high)"
                }
                if track.mediaType == .video, let color = track.color { line += ", \(color.summary)" }
            case .audio:
                line += " \(track.sampleRate) Hz, \(track.channelCount) channel\(track.channelCount == 1 ? "" : "s")"
            default: break
            }
            line += ", \(String(format3: track.timeRange.start.seconds))…\(String(format3: track.timeRange.end.seconds)) s"
            lines.append(line)
        }
        return lines.joined(separator: "\n")
    }

    static func json(_ asset: Asset) -> String {
        let tracks = asset.tracks.map { t -> String in
            let transform = t.preferredTransform
            var fields = [
                "\"trackID\":\(t.trackID)", "\"mediaType\":\(jsonString(t.mediaType.rawValue))", "\"codec\":\(jsonString(t.codec))",
                "\"start\":\(t.timeRange.start.seconds)", "\"duration\":\(t.timeRange.duration.seconds)",
            ]
            if t.mediaType == .video || t.mediaType == .image {
                fields += ["\"width\":\(Int(t.naturalSize.width))", "\"height\":\(Int(t.naturalSize.height))",
                           "\"uprightWidth\":\(Int(t.uprightSize.width))", "\"uprightHeight\":\(Int(t.uprightSize.height))",
                           "\"shownWidth\":\(Int(t.shownSize.width))", "\"shownHeight\":\(Int(t.shownSize.height))", "\"pixelAspectRatio\":\(t.pixelAspectRatio)",
                           "\"pixelFormat\":\(jsonString(t.pixelFormat))", "\"fieldOrder\":\(jsonString(t.fieldOrder.rawValue))", "\"nominalFrameRate\":\(t.nominalFrameRate)",
                           "\"preferredTransform\":[\(transform.a),\(transform.b),\(transform.c),\(transform.d),\(transform.tx),\(transform.ty)]"]
            }
            if t.mediaType == .video, let color = t.color {
                fields += ["\"bitDepth\":\(color.bitDepth)", "\"primaries\":\(jsonString(color.primaries))",
                           "\"transfer\":\(jsonString(color.transfer))", "\"matrix\":\(jsonString(color.matrix))",
                           "\"range\":\(jsonString(color.range))", "\"hdr\":\(color.hdr.map { jsonString($0.rawValue) } ?? "null")",
                           "\"dolbyVision\":\(color.dolbyVision.map(jsonString) ?? "null")", "\"hdr10Plus\":\(color.hdr10Plus)",
                           "\"masteringMaxLuminance\":\(color.hdrMetadata?.masteringDisplay.map { "\(Double($0.maxLuminance) / 10_000)" } ?? "null")",
                           "\"maxCLL\":\(color.hdrMetadata?.contentLightLevel.map { "\($0.maxContent)" } ?? "null")",
                           "\"maxFALL\":\(color.hdrMetadata?.contentLightLevel.map { "\($0.maxFrameAverage)" } ?? "null")"]
            }
            if t.mediaType == .audio { fields += ["\"sampleRate\":\(t.sampleRate)", "\"channels\":\(t.channelCount)"] }
            return "{" + fields.joined(separator: ",") + "}"
        }
        return "{\"path\":\(jsonString(asset.path)),\"format\":\(jsonString(asset.formatName)),\"duration\":\(asset.duration.seconds),\"startTimecode\":\(asset.startTimecode.map { jsonString($0.description) } ?? "null"),\"tracks\":[\(tracks.joined(separator: ","))]}"
    }
}
