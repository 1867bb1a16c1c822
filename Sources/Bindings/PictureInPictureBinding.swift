import CMoonLua
import MoonreelEngine
import MoonreelScriptHost

/// `av.pictureInPicture`: a clip small in a corner, on top of every instruction it overlaps.
extension API {
    func pictureInPicture(_ call: LuaCall) throws -> Int32 {
        let comp: Composition = try call.object(1, classes[Composition.self])
        let vc: VideoComposition = try call.object(2, classes[VideoComposition.self])
        guard case .clip(let file, let range) = try sequenceItem(call, 3) else {
            throw call.argumentError(3, "a title card cannot be an inset; give a clip")
        }
        var inset = PictureInPicture(), at = MediaTime.zero
        try options(call, 4, [
            "at": { at = try self.time(call, $0, allowNegative: false) },
            "corner": { inset.corner = try self.choice(call, $0, PictureInPicture.Corner.self) },
            "scale": { inset.scale = try self.bounded(call, $0, PictureInPicture.scaleRange) },
            "margin": { inset.margin = try self.bounded(call, $0, PictureInPicture.marginRange) },
            "borderWidth": { inset.borderWidth = try self.bounded(call, $0, 0...100) },
            "borderColor": { inset.borderColor = try self.color(call, $0) },
        ])
        let added = try engine(call) { try inset.add(file, range: range, at: at, to: comp, videoComposition: vc) }
        file.tracks.forEach(remember)
        push(call, added.layerInstruction)
        push(call, added.videoTrack)
        if let audio = added.audioTrack { push(call, audio) } else { call.pushNil() }
        return 3
    }
}
