import CMoonLua
import MoonreelEngine
import MoonreelScriptHost

/// `av.imageGenerator(comp, {videoComposition=})` (AVAssetImageGenerator with zero tolerance).
extension API {
    func makeImageGeneratorClass() -> LuaClass {
        let luaClass = LuaClass("ImageGenerator", doc: "Writes exact composed frames as PNG files. It keeps its sources open (decoders) until collected; `local gen <close> = av.imageGenerator(comp)` lets them go at the end of the scope.")
        luaClass.describe = { _ in "ImageGenerator" }
        luaClass.closesFiles = true
        luaClass.property("videoComposition", of: ImageGenerator.self,
                          get: { call, g in if let v = g.videoComposition { try call.push(v) } else { call.pushNil() } },
                          set: { call, g, index in g.videoComposition = try call.optionalObject(index, VideoComposition.self) })
        luaClass.property("overwrite", of: ImageGenerator.self, doc: "whether copyImage may replace an existing file (default false)",
                          get: { call, g in call.push(g.overwrite) },
                          set: { call, g, index in g.overwrite = try call.boolean(index) })
        luaClass.method("copyImage", of: ImageGenerator.self, doc: "gen:copyImage(t, \"frame.png\"): the composed frame at exactly t as .png, .jpg or .webp; returns the path") { call, g in
            let api = try call.api()
            let at = try call.time(2, allowNegative: false)
            let path = try call.filePath(3)
            if api.policy.overwriteOutputs { g.overwrite = true }
            try api.reportDiagnostics(of: g, call)
            try call.engine { try g.copyImage(at: at, to: path) }
            call.push(path)
            return 1
        }
        luaClass.method("copyCGImageAtTime", of: ImageGenerator.self, doc: "gen:copyCGImageAtTime(t): the composed frame at exactly t as an Image (layer contents, image:write(path)), and that time") { call, g in
            let api = try call.api()
            let at = try call.time(2, allowNegative: false)
            try api.reportDiagnostics(of: g, call)
            let pixels = try call.engine { try g.image(at: at) }
            try call.push(ImageBox(ImageSource(pixels: pixels, description: "frame at \(format(at.seconds)) s")))
            try call.push(exact: at)
            return 2
        }
        luaClass.document([
            "videoComposition": "the video composition its frames are composed with (nil: each clip upright)",
        ])
        luaClass.example = """
            local generator = av.imageGenerator(comp, { videoComposition = vc })
            generator:copyImage(2.5, "frame.png")                 -- exactly the frame shown at 2.5 s
            local picture = generator:copyCGImageAtTime(1)       -- in memory, e.g. for layer contents
            """
        return luaClass
    }

    /// Says what the generator's pictures show other than asked (text cut to fit…), once,
    /// at the line that first draws one; under --strict before anything is written.
    private func reportDiagnostics(of generator: ImageGenerator, _ call: LuaCall) throws {
        for diagnostic in try call.engine({ try generator.newDiagnostics() }) { try call.engine { try policy.report(diagnostic, at: call.L) } }
    }

    var imageGeneratorFunctions: [AVFunction] {
        [("imageGenerator", "av.imageGenerator(compositionOrAsset [, {videoComposition=}])", { call in
            let api = try call.api()
            let generator = ImageGenerator(composition: try call.compositionOrAsset(1))
            generator.readFiles = api.readFiles
            try call.applyProperties(2, to: generator, of: ImageGenerator.self)
            try call.push(generator)
            return 1
        })]
    }
}

extension Binding {
    static let imageGenerator = Binding(classes: [.init(ImageGenerator.self) { $0.makeImageGeneratorClass() }],
                                      functions: { $0.imageGeneratorFunctions })
}
