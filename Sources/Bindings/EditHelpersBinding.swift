import CMoonLua
import MoonreelEngine
import MoonreelScriptHost

/// The edit helpers' entries in `av` and their examples: each helper builds the ordinary
/// objects a script goes on editing, and lives in a file of its own (JoinBinding: join,
/// cutToBeats, titleCard; PictureInPictureBinding; LoudnessBinding: loudness and ducking).
extension API {
    var editHelperFunctions: [AVFunction] {
        [
            ("join", "av.join(items [, {transition=, duration=, direction=, transitions=, renderSize=, fit=\"fit\"|\"fill\", focus={x, y}}]) → comp, vc, mix, parts: clips ({asset, start=, duration=}), stills and title cards one after another with transitions (\"none\", \"dissolve\", \"slide\", \"wipe\", \"fadeThroughBlack\", or a transition effect's name: clockWipe, irisWipe, push… with its options as {name, option=}) and the sound crossfaded (docs/edit-helpers.md)", { call in
                try call.api().join(call)
            }),
            ("cutToBeats", "av.cutToBeats(clips, beats [, {every=1, transition=, transitionDuration=0.25, music=, duration=, renderSize=, fit=, focus=}]) → comp, vc, mix, parts: a montage cut on every `every`-th beat (seconds, e.g. av.analyze(song).beats), the clips taken in turn (each going on where it last stopped, from its start again when what is left is too short, with a cutLeftOut note), over `music` (an asset or audio track, in place of the clips' sound); lasts `duration` (default: the music, else up to the last beat) (docs/analysis.md)", { call in
                try call.api().cutToBeats(call)
            }),
            ("titleCard", "av.titleCard{title=, subtitle=, duration=, backgroundColor=, textColor=, font=, fontSize=}: text on a colour, a piece for av.join", { call in
                let made = TitleCard(title: "")
                try call.applyProperties(1, to: made, of: TitleCard.self)
                try call.push(made)
                return 1
            }),
            ("pictureInPicture", "av.pictureInPicture(comp, vc, clip [, {at=, corner=, scale=, margin=, borderWidth=, borderColor=}]) → layerInstruction, videoTrack, audioTrack: the clip small in a corner, on top of every instruction it overlaps", { call in
                try call.api().pictureInPicture(call)
            }),
            ("loudness", "av.loudness(asset or comp [, {audioMix=, timeRange=}]) → {integrated=, truePeak=, range=} (LUFS, dBTP, LU) or nil without audio: EBU R128, as libavfilter's ebur128 measures", { call in
                try call.api().loudness(call)
            }),
        ]
    }

    /// Examples for the reference, by function name.
    var editHelperExamples: [String: String] {
        [
            "join": """
                local comp, vc, mix, parts = av.join({ av.asset("a.mov"), { av.asset("b.mov"), start = 2, duration = 3 },
                                                       { av.asset("photo.jpg"), duration = 4 }, av.titleCard{ title = "The end" } },
                                                     { transition = "dissolve", duration = 1 })
                -- per join: av.join(items, { transitions = { "slide", { "wipe", duration = 0.5, direction = "up" }, "none" } })
                local session = av.exportSession(comp, "HighestQuality")
                session.outputURL, session.videoComposition, session.audioMix = "out.mp4", vc, mix
                """,
            "pictureInPicture": """
                local comp, vc, mix = av.join({ av.asset("talk.mov") })
                local inset, video, audio = av.pictureInPicture(comp, vc, { av.asset("screen.mov"), duration = 10 },
                    { at = 2, corner = "topRight", scale = 0.3, margin = 0.04, borderWidth = 4 })
                """,
            "loudness": """
                local measured = av.loudness(av.asset("episode.m4a"))
                print(measured.integrated, measured.truePeak)   -- e.g. -21.3  -2.1
                session.loudness = -16                          -- bring the export there
                """,
        ]
    }
}

extension Binding {
    static let editHelpers = Binding(classes: [.init(TitleCard.self) { $0.makeTitleCardClass() }], functions: { $0.editHelperFunctions })
}
