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
                          get: { [unowned self] call, g in if let v = g.videoComposition { push(call, v) } else { call.pushNil() } },
                          set: { [unowned self] call, g, index in g.videoComposition = try call.optionalObject(index, classes[VideoComposition.self]) })
        luaClass.property("overwrite", of: ImageGenerator.self, doc: "whether copyImage may replace an existing file (default false)",
                          get: { call, g in call.push(g.overwrite) },
                          set: { call, g, index in g.overwrite = try call.boolean(index) })
        luaClass.method("copyImage", of: ImageGenerator.self, doc: "gen:copyImage(t, \"frame.png\"): the composed frame at exactly t as .png, .jpg or .webp; returns the path") { [unowned self] call, g in
            let at = try time(call, 2, allowNegative: false)
            let path = try filePath(call, 3)
            if policy.overwriteOutputs { g.overwrite = true }
            try reportDiagnostics(of: g, call)
            try engine(call) { try g.copyImage(at: at, to: path) }
            call.push(path)
            return 1
        }
        luaClass.method("copyCGImageAtTime", of: ImageGenerator.self, doc: "gen:copyCGImageAtTime(t): the composed frame at exactly t as an Image (layer contents, image:write(path)), and that time") { [unowned self] call, g in
            let at = try time(call, 2, allowNegative: false)
            try reportDiagnostics(of: g, call)
            let pixels = try engine(call) { try g.image(at: at) }
            push(call, ImageBox(ImageSource(pixels: pixels, description: "frame at \(format(at.seconds)) s")))
            push(call, exact: at)
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
        for diagnostic in try engine(call, { try generator.newDiagnostics() }) { try engine(call) { try policy.report(diagnostic, at: call.L) } }
    }

    var imageGeneratorFunctions: [AVFunction] {
        [("imageGenerator", "av.imageGenerator(compositionOrAsset [, {videoComposition=}])", { [unowned self] call in
            let generator = ImageGenerator(composition: try compositionOrAsset(call, 1))
            generator.readFiles = readFiles
            try applyProperties(call, 2, to: generator, of: classes[ImageGenerator.self])
            push(call, generator)
            return 1
        })]
    }
}

extension Binding {
    static let imageGenerator = Binding(classes: [.init(ImageGenerator.self) { $0.makeImageGeneratorClass() }],
                                      functions: { $0.imageGeneratorFunctions })
}
