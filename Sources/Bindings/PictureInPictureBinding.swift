import CMoonLua
import MoonreelEngine
import MoonreelScriptHost

/// `av.pictureInPicture`: a clip small in a corner, on top of every instruction it overlaps.
extension API {
    func pictureInPicture(_ call: LuaCall) throws -> Int32 {
        let comp: Composition = try call.object(1, Composition.self)
        let vc: VideoComposition = try call.object(2, VideoComposition.self)
        guard case .clip(let file, let range) = try sequenceItem(call, 3) else {
            throw call.argumentError(3, "a title card cannot be an inset; give a clip")
        }
        var inset = PictureInPicture(), at = MediaTime.zero
        try call.options(4, [
            "at": { at = try call.time($0, allowNegative: false) },
            "corner": { inset.corner = try call.choice($0, PictureInPicture.Corner.self) },
            "scale": { inset.scale = try call.bounded($0, PictureInPicture.scaleRange) },
            "margin": { inset.margin = try call.bounded($0, PictureInPicture.marginRange) },
            "borderWidth": { inset.borderWidth = try call.bounded($0, 0...100) },
            "borderColor": { inset.borderColor = try call.color($0) },
        ])
        let added = try call.engine { try inset.add(file, range: range, at: at, to: comp, videoComposition: vc) }
        file.tracks.forEach(remember)
        if let unplayed = file.unplayedSoundNote(as: "the inset \"\(file.path)\"") { try policy.report(unplayed, at: call.L) }
        try call.push(added.layerInstruction)
        try call.push(added.videoTrack)
        if let audio = added.audioTrack { try call.push(audio) } else { call.pushNil() }
        return 3
    }
}
