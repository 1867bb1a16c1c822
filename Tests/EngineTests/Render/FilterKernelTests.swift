// FFmpeg's headers are in CMoonAVShim's module too, and Clang may list an enum under
// either: import both so its constants are always visible here.
import CMoonAVShim
import CMoonFFmpeg
import Testing
@testable import MoonreelEngine
@testable import MoonreelComposition

/// The filters' pieces without Lua or export: .cube parsing, the kernels on Y'CbCr planes
/// and on premultiplied BGRA, the blur graph's retuning, ramps, key paths.
@Suite struct FilterKernelTests {
    /// A 2³ cube mapping (r, g, b) to (b, g, r).
    static let swapCube = "TITLE \"swap\"\n# red and blue change places\nLUT_3D_SIZE 2\n"
        + (0..<8).map { i in "\(i >> 2 & 1) \(i >> 1 & 1) \(i & 1)" }.joined(separator: "\n") + "\n"

    @Test func swapCubeParsesAndSwaps() throws {
        let cube = try ColorCube.parse(Self.swapCube, fileName: "swap.cube")
        #expect(cube.size == 2)
        let out = cube.lookup(SIMD3(0.9, 0.4, 0.1))
        #expect(abs(out.x - 0.1) < 1e-6 && abs(out.y - 0.4) < 1e-6 && abs(out.z - 0.9) < 1e-6)
    }

    @Test func badCubeFilesAreRefusedWithTheirLine() {
        let cases: [(String, String)] = [
            ("LUT_3D_SIZE 2\n0 0 0\n1 0\n", "bad.cube:3: a table line needs three numbers (red green blue), got \"1 0\""),
            ("0 0 0\n", "bad.cube:1: table line before LUT_3D_SIZE"),
            ("LUT_3D_SIZE 300\n", "bad.cube:1: LUT_3D_SIZE must be a whole number 2…129, got \"LUT_3D_SIZE 300\""),
            ("LUT_3D_SIZE 2\n0 0 0\n", "bad.cube: has 1 table lines; LUT_3D_SIZE 2 needs 8"),
            ("LUT_1D_SIZE 1024\n", "bad.cube:1: a 1D LUT (LUT_1D_SIZE); colorCube needs a 3D LUT (LUT_3D_SIZE)"),
            ("TITLE \"x\"\n", "bad.cube: no LUT_3D_SIZE line: not a 3D .cube LUT"),
            ("LUT_3D_SIZE 2\nCOLOR_SPACE srgb\n", "bad.cube:2: unknown keyword \"COLOR_SPACE\" (TITLE, LUT_3D_SIZE, DOMAIN_MIN, DOMAIN_MAX, LUT_3D_INPUT_RANGE)"),
            ("LUT_3D_SIZE 2\n0 0 nan\n", "bad.cube:2: a table line needs three numbers (red green blue), got \"0 0 nan\""),
        ]
        for (text, message) in cases {
            #expect(throws: EngineError(message, kind: .decode, subject: "bad.cube")) { try ColorCube.parse(text, fileName: "bad.cube") }
        }
    }

    @Test func swapCubeTurnsRedPlanesIntoBluePlanes() throws {
        // BT.709 limited range: red is Y 63, Cb 102, Cr 240; blue is Y 32, Cb 240, Cr 118.
        let frame = TestYUVFrame(width: 4, height: 4, y: 63, u: 102, v: 240)
        let cube = try ColorCube.parse(Self.swapCube, fileName: "swap.cube")
        frame.withImage { cube.apply(to: $0) }
        #expect(frame.luma.allSatisfy { abs(Int($0) - 32) <= 1 }, "\(frame.luma)")
        #expect(frame.cb.allSatisfy { abs(Int($0) - 240) <= 1 } && frame.cr.allSatisfy { abs(Int($0) - 118) <= 1 }, "\(frame.cb) \(frame.cr)")
    }

    @Test func colorControlsOnPlanesMatchesItsRGBMaths() throws {
        var filter = Filter(.colorControls)
        try filter.set("saturation", .number(0))
        try filter.set("brightness", .number(0.1))
        let frame = TestYUVFrame(width: 4, height: 4, y: 128, u: 90, v: 200)
        frame.withImage { ColorFilters.applyColorControls(filter, to: $0) }
        // Y' 0.5114 + 0.1 → code 149.9; saturation 0 leaves no colour at all.
        #expect(frame.luma.allSatisfy { $0 == 150 } && frame.cb.allSatisfy { $0 == 128 } && frame.cr.allSatisfy { $0 == 128 })
        // The same filter through a sampled cube (the path colour runs take) agrees.
        let grey = ColorFilters.cube(for: [filter, Filter(.exposureAdjust)]).lookup(SIMD3(0.2, 0.5, 0.9))
        let expected = encodeSRGB(decodeSRGB(0.2126 * 0.2 + 0.7152 * 0.5 + 0.0722 * 0.9 + 0.1) * powf(2, 0.5))
        #expect(abs(grey.x - expected) < 0.003 && abs(grey.y - grey.x) < 0.003 && abs(grey.z - grey.x) < 0.003)
    }

    @Test func chromaKeyClearsTheKeyColourOnly() throws {
        let lime = try solidImage(width: 2, height: 2, red: 0, green: 255, blue: 0, alpha: 255)
        let red = try solidImage(width: 2, height: 2, red: 255, green: 0, blue: 0, alpha: 255)
        let key = ChromaKey(Filter(.chromaKey))
        key.apply(to: lime.view)
        key.apply(to: red.view)
        #expect(lime.pixel(x: 1, y: 1) == (0, 0, 0, 0))
        #expect(red.pixel(x: 1, y: 1) == (0, 0, 255, 255))
    }

    /// Luma below the threshold stays, above it goes, across the softness band (half way at
    /// the threshold itself); inverted, the other way round.
    @Test func lumaThresholdKeepsWhatIsDarkerThanIt() throws {
        var filter = Filter(.lumaThreshold)
        try filter.set("threshold", .number(0.5))
        try filter.set("softness", .number(0.2))
        let opacity = { (grey: Float, kernel: LumaThreshold) in kernel.opacity(SIMD3(repeating: grey)) }
        let kernel = LumaThreshold(filter)
        #expect(opacity(0.3, kernel) == 1 && opacity(0.7, kernel) == 0 && abs(opacity(0.5, kernel) - 0.5) < 1e-5 && abs(opacity(0.45, kernel) - 0.75) < 1e-5)
        try filter.set("invert", .number(1))
        #expect(opacity(0.3, LumaThreshold(filter)) == 0 && opacity(0.8, LumaThreshold(filter)) == 1)
        let grey = try solidImage(width: 2, height: 2, red: 230, green: 230, blue: 230, alpha: 255)
        LumaThreshold(Filter(.lumaThreshold)).apply(to: grey.view)   // 0.9 above 0.5 ± 0.025: gone
        #expect(grey.pixel(x: 0, y: 0) == (0, 0, 0, 0))
    }

    @Test func vignetteDarkensCornersAndLeavesTheCentre() throws {
        var filter = Filter(.vignette)
        try filter.set("intensity", .number(1))
        let white = try solidImage(width: 64, height: 48, red: 255, green: 255, blue: 255, alpha: 255)
        Vignette(filter).apply(to: white.view)
        #expect(white.pixel(x: 32, y: 24).red == 255)
        // Pixel (0, 0) is 0.982 of the way to the corner: t 0.964, factor 0.072.
        #expect(abs(Int(white.pixel(x: 0, y: 0).red) - 18) <= 1 && abs(Int(white.pixel(x: 63, y: 47).red) - 18) <= 1)
    }

    @Test func blurGraphRetunesByCommand() throws {
        let frame = try Frame(width: 64, height: 64, format: AV_PIX_FMT_YUV420P)
        for plane in 0...2 {
            let (base, stride) = frame.plane(plane)
            let side = plane == 0 ? 64 : 32
            for y in 0..<side { for x in 0..<side { base[y * stride + x] = (x / 4 + y / 4) % 2 == 0 ? 40 : 200 } }
        }
        let graph = try BlurGraph(.init(width: 64, height: 64, format: AV_PIX_FMT_YUV420P, lumaOnly: false), sigma: 0)
        func spread(_ sigma: Double) throws -> Int {
            let blurred = try graph.blur(frame, sigma: sigma)
            let (base, stride) = blurred.plane(0)
            let row = (8..<56).map { Int(base[32 * stride + $0]) }
            return (row.max() ?? 0) - (row.min() ?? 0)
        }
        let sharp = try spread(0.5), soft = try spread(4), again = try spread(0.5)
        #expect(soft < sharp / 4, "σ 4 should flatten a 4-pixel checkerboard: \(soft) vs \(sharp)")
        #expect(again == sharp, "retuned back to σ 0.5: \(again) vs \(sharp)")
    }

    @Test func rampsMoveParametersAndNameTheirFilter() throws {
        var blur = Filter(.gaussianBlur)
        blur.name = "soft"
        var stack = FilterStack([blur])
        try stack.setRamp(from: 0, to: 20, parameter: "radius", filter: "soft", over: TimeRange(start: .zero, duration: MediaTime(value: 2, timescale: 1)))
        #expect(stack.filters(at: MediaTime(value: 1, timescale: 2)).first?.number("radius") == 5)
        #expect(stack.filters(at: MediaTime(value: 9, timescale: 1)).first?.number("radius") == 20)
        #expect(throws: EngineError("no filter named \"blur\" (filters: \"soft\")")) {
            try stack.setValue(3, parameter: "radius", filter: "blur", at: .zero)
        }
        #expect(throws: EngineError("gaussianBlur radius must be in 0…200, got 300")) {
            try stack.setValue(300, parameter: "radius", filter: "soft", at: .zero)
        }
        stack.filters = [blur, blur]
        #expect(throws: EngineError("videoComposition.filters: 2 filters are named \"soft\"; give each its own name (filter.name = \"…\") to change one")) {
            try stack.check("videoComposition.filters")
        }
    }

    @Test func filterKeyPathsRoundTrip() throws {
        let path = try AnimatableKeyPath(named: "filters.soft.radius")
        #expect(path == .filterParameter(filter: "soft", parameter: "radius") && path.rawValue == "filters.soft.radius")
        #expect(try AnimatableKeyPath(named: "transform.scale").rawValue == "transform.scale")
        #expect(throws: EngineError.self) { try AnimatableKeyPath(named: "filters.soft") }
    }
}
