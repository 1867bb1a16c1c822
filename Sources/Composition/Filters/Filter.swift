import MoonreelMedia

/// The filters pictures can go through, named as Core Image names them where it has the
/// filter (`gaussianBlur` is `CIGaussianBlur`); `chromaKey` has no Core Image twin.
public enum FilterKind: String, Sendable, Hashable, CaseIterable {
    /// A Gaussian blur (`CIGaussianBlur`): `radius`.
    case gaussianBlur
    /// Saturation, brightness and contrast (`CIColorControls`).
    case colorControls
    /// Exposure in stops (`CIExposureAdjust`): `ev`.
    case exposureAdjust
    /// A 3D lookup table from a .cube file (`CIColorCube`): `path`.
    case colorCube
    /// Sharpening of brightness only (`CISharpenLuminance`): `sharpness`, `radius`.
    case sharpenLuminance
    /// Darker (or lighter) corners (`CIVignette`): `intensity`, `radius`.
    case vignette
    /// A new white (`CIWhitePointAdjust`): `color`. Warms, cools or tints the picture.
    case whitePointAdjust
    /// Transparency where pixels are near a key colour (Moonreel's own): `color`,
    /// `similarity`, `blend`. Only for layers and layer instructions.
    case chromaKey
    /// Transparency where pixels are lighter than a threshold (Moonreel's own): `threshold`,
    /// `softness`, `invert`. A grey picture through it, the threshold rising, is a luma wipe's
    /// mask. Only for layers and layer instructions.
    case lumaThreshold
    /// Film grain: luma noise, new every frame (Moonreel's own): `amount`, `size`, `seed`.
    case grain
    /// A digital glitch (Moonreel's own): red and blue split sideways, bands of rows offset,
    /// in seeded strikes: `intensity`, `shift`, `bands`, `bandOffset`, `rate`, `burst`, `seed`.
    case glitch

    /// Core Image's name, which scripts ported from iOS pass ("CIGaussianBlur").
    public var coreImageName: String? {
        self == .chromaKey || self == .lumaThreshold || changesOverTime ? nil : "CI" + rawValue.prefix(1).uppercased() + rawValue.dropFirst()
    }

    /// Whether the filter draws differently at every time (its noise is a function of the
    /// time too): grain and glitch. Whoever takes filters at a time sets their `clock`.
    public var changesOverTime: Bool { self == .grain || self == .glitch }

    /// The kind a name means: ours, or Core Image's.
    public init?(named name: String) {
        if let kind = FilterKind(rawValue: name) { self = kind; return }
        guard let kind = FilterKind.allCases.first(where: { $0.coreImageName == name }) else { return nil }
        self = kind
    }

    /// One line for the reference.
    public var summary: String {
        switch self {
        case .gaussianBlur: "Gaussian blur (libavfilter gblur); the picture's edges are extended, not faded"
        case .colorControls: "saturation, then brightness, then contrast: rgb = mix(luma, rgb, saturation) + brightness, then (rgb − 0.5) · contrast + 0.5"
        case .exposureAdjust: "exposure in stops: linear light (sRGB curve) times 2^ev"
        case .colorCube: "a 3D LUT from a .cube file (Adobe/Resolve format), interpolated tetrahedrally as ffmpeg's lut3d"
        case .sharpenLuminance: "unsharp mask on brightness only: luma + sharpness · (luma − blurred luma), colours kept"
        case .vignette: "darkens towards the corners: colour × (1 − intensity · t²), t going 0…1 from radius/2 to 1 of the way out to a corner"
        case .whitePointAdjust: "white becomes the colour: each channel of linear light (sRGB curve) is multiplied by the colour's; warm with a pale orange, cool with a pale blue"
        case .chromaKey: "makes pixels near a key colour transparent, by distance in CbCr as ffmpeg's chromakey; for layers and layer instructions"
        case .lumaThreshold: "pixels darker than the threshold stay, lighter ones become transparent, across a band `softness` wide: alpha × clamp((threshold − luma) / softness + ½); with invert, lighter ones stay. A grey picture through it as the threshold rises from 0 to 1 is a luma wipe's mask"
        case .grain: "film grain: luma noise of standard deviation amount · 0.12, in grains `size` pixels across, a new pattern every frame (the same for the same seed and time); colours kept"
        case .glitch: "during seeded strikes (rate a second, burst long; rate 0: always) red moves shift pixels right and blue as far left, and `bands` bands of rows slide sideways by up to bandOffset, all times intensity"
        }
    }

    /// The settings this kind takes, with their ranges, defaults and a line of help each.
    public var parameters: [FilterParameter] {
        switch self {
        case .gaussianBlur:
            [.number("radius", 10, 0...200, "standard deviation of the Gaussian, in render-size pixels")]
        case .colorControls:
            [.number("saturation", 1, 0...3, "0 grey, 1 unchanged, more: stronger colours"),
             .number("brightness", 0, -1...1, "added to R', G' and B' (0…1 scale)"),
             .number("contrast", 1, 0...4, "scales around mid grey; 1 unchanged")]
        case .exposureAdjust:
            [.number("ev", 0.5, -10...10, "stops: +1 doubles the light, −1 halves it")]
        case .colorCube:
            [.file("path", "the .cube file (LUT_3D_SIZE 2…\(ColorCube.maxSize)); read when set, as any other input file")]
        case .sharpenLuminance:
            [.number("sharpness", 0.4, 0...4, "how much of the detail is added back; 0 unchanged"),
             .number("radius", 1.69, 0...20, "size of the detail sharpened, in render-size pixels")]
        case .vignette:
            [.number("intensity", 0, -1...1, "darkening at the corners (negative lightens)"),
             .number("radius", 1, 0...2, "where darkening starts: 0 at the centre, 1 halfway to the corners, 2 nowhere")]
        case .whitePointAdjust:
            [.color("color", Color(red: 1, green: 1, blue: 1), "the colour white becomes (white: unchanged)")]
        case .chromaKey:
            [.color("color", Color(red: 0, green: 1, blue: 0), "the key colour"),
             .number("similarity", 0.1, 0.0001...1, "CbCr distance within which pixels become fully transparent"),
             .number("blend", 0.05, 0...1, "distance over which transparency fades back to opaque; 0 a hard edge")]
        case .lumaThreshold:
            [.number("threshold", 0.5, -1...2, "the luma (0 black … 1 white) at which pixels turn transparent; below 0 none stays, above 1 all"),
             .number("softness", 0.05, 0...1, "the width of luma over which they fade out; 0 a hard edge"),
             .number("invert", 0, 0...1, "1: lighter pixels stay and darker ones go (0 or 1)")]
        case .grain:
            [.number("amount", 0.3, 0...1, "how strong: the noise's standard deviation is amount · 0.12 of black to white; 0 none"),
             .number("size", 1.5, 0.5...16, "grain size in render-size pixels (at most a picture pixel's worth finer)"),
             .number("seed", 0, 0...4_294_967_295, "picks the pattern; the same seed and time give the same grain")]
        case .glitch:
            [.number("intensity", 0.6, 0...1, "how strong: scales the channel split and the band offsets; 0 none"),
             .number("shift", 10, 0...200, "render-size pixels red moves right and blue moves left, at intensity 1"),
             .number("bands", 5, 0...32, "bands of rows slid sideways in each pattern (rounded to a whole number)"),
             .number("bandOffset", 60, 0...2000, "the largest sideways slide of a band, render-size pixels at intensity 1"),
             .number("rate", 1.5, 0...30, "strikes a second, at seeded moments; 0: glitching all the time"),
             .number("burst", 0.25, 0.02...10, "seconds each strike lasts"),
             .number("seed", 0, 0...4_294_967_295, "picks the strike times and the bands; the same seed and time give the same pixels")]
        }
    }

    /// The parameter called `name`, or whose Core Image key that is ("inputRadius").
    public func parameter(_ name: String) -> FilterParameter? { parameters.first { $0.name == name || $0.coreImageKey == name } }

    /// Whether the filter can make pixels transparent (which an opaque video frame cannot show).
    public var makesTransparent: Bool { self == .chromaKey || self == .lumaThreshold }

    /// Filters that change each pixel from its own colour alone (the ones a colour lookup can run).
    var isPointwiseColor: Bool { self == .colorControls || self == .exposureAdjust || self == .colorCube || self == .whitePointAdjust }
}

/// One setting of a filter kind: its name, what it takes, its default and a line of help.
public struct FilterParameter: Sendable {
    /// What a parameter takes.
    public enum Kind: Sendable {
        /// A number within `range`; `defaultValue` until set.
        case number(range: ClosedRange<Double>, defaultValue: Double)
        /// A colour; `defaultValue` until set.
        case color(defaultValue: Color)
        /// A LUT file, read when the parameter is set.
        case file
    }
    /// The parameter's name in scripts and key paths ("radius"); see `coreImageKey` for
    /// Core Image's.
    public let name: String
    /// What the parameter takes: a number in a range, a colour or a LUT file.
    public let kind: Kind
    /// A line of help: what the value means and its unit.
    public let doc: String

    static func number(_ name: String, _ defaultValue: Double, _ range: ClosedRange<Double>, _ doc: String) -> FilterParameter {
        FilterParameter(name: name, kind: .number(range: range, defaultValue: defaultValue), doc: doc)
    }
    static func color(_ name: String, _ defaultValue: Color, _ doc: String) -> FilterParameter {
        FilterParameter(name: name, kind: .color(defaultValue: defaultValue), doc: doc)
    }
    static func file(_ name: String, _ doc: String) -> FilterParameter { FilterParameter(name: name, kind: .file, doc: doc) }

    /// Core Image's key for it ("inputRadius"; "inputEV" for ev).
    public var coreImageKey: String { name == "ev" ? "inputEV" : "input" + name.prefix(1).uppercased() + name.dropFirst() }

    /// The value a new filter starts with; nil for a LUT file, which has none until set.
    public var defaultValue: FilterValue? {
        switch kind {
        case .number(_, let value): .number(value)
        case .color(let value): .color(value)
        case .file: nil
        }
    }
}

/// A parameter's value.
public enum FilterValue: Sendable, Hashable {
    /// A number parameter's value.
    case number(Double)
    /// A colour parameter's value.
    case color(Color)
    /// A LUT file's table, read with `ColorCube.read(path:)`.
    case cube(ColorCube)
}

/// One filter with its settings, as a `CIFilter` with its input values. A value: layers,
/// video compositions and layer instructions keep copies, as Core Animation copies a
/// layer's filters, and renderers read them on other threads.
public struct Filter: Sendable, Hashable {
    /// Which filter this is (a `CIFilter`'s class).
    public let kind: FilterKind
    /// What key paths and ramps call it (`filters.NAME.radius`); the kind's name unless set,
    /// as a CIFilter's `name` is.
    public var name: String
    /// Every parameter that has a value (all but an unset LUT file).
    public private(set) var values: [String: FilterValue]
    /// Seconds of composition time the filter is drawn at, for the kinds that change over
    /// time (`FilterKind.changesOverTime`); 0 for the others, so equal settings stay equal.
    public private(set) var clock: Double = 0

    /// A filter of `kind` with every parameter at its default, like `CIFilter(name:)`.
    public init(_ kind: FilterKind) {
        self.kind = kind
        name = kind.rawValue
        values = [:]
        for parameter in kind.parameters { values[parameter.name] = parameter.defaultValue }
    }

    /// Sets a parameter, checking the name, the kind of value and its range.
    public mutating func set(_ parameterName: String, _ value: FilterValue) throws {
        let parameter = try parameterNamed(parameterName)
        switch (parameter.kind, value) {
        case (.number(let range, _), .number(let number)):
            guard number.isFinite, range.contains(number) else {
                throw EngineError("\(kind.rawValue) \(parameter.name) must be in \(shortNumber(range.lowerBound))…\(shortNumber(range.upperBound)), got \(shortNumber(number))")
            }
        case (.color, .color), (.file, .cube): break
        default:
            throw EngineError("\(kind.rawValue) \(parameter.name) takes \(parameter.kind.noun), not \(value.noun)")
        }
        values[parameter.name] = value
    }

    /// This filter as drawn at `time`: its clock set when its kind changes over time.
    public func drawn(at time: MediaTime) -> Filter {
        guard kind.changesOverTime else { return self }
        var timed = self
        timed.clock = time.seconds
        return timed
    }

    /// Sets a number parameter known to exist, clamped to its range (eased ramps may overshoot).
    mutating func setClamped(_ parameter: String, _ value: Double) {
        guard let found = kind.parameter(parameter), case .number(let range, _) = found.kind, !value.isNaN else { return }
        values[found.name] = .number(min(max(value, range.lowerBound), range.upperBound))
    }

    /// The parameter called `name`; the error lists the kind's parameters.
    public func parameterNamed(_ name: String) throws -> FilterParameter {
        guard let parameter = kind.parameter(name) else {
            throw EngineError("\(kind.rawValue) has no parameter \(name.quotedForMessage()) (parameters: \(kind.parameters.map(\.name).joined(separator: ", ")))")
        }
        return parameter
    }

    /// A number parameter's value (0 if the kind has no such number).
    public func number(_ name: String) -> Double {
        guard let parameter = kind.parameter(name), case .number(let value) = values[parameter.name] else { return 0 }
        return value
    }

    var color: Color {
        if case .color(let value) = values["color"] { return value }
        return .black
    }

    var cube: ColorCube? {
        if case .cube(let cube) = values["path"] { return cube }
        return nil
    }

    /// True when the filter leaves every picture as it is, so renderers skip it.
    package var isIdentity: Bool {
        switch kind {
        case .gaussianBlur: number("radius") <= 0
        case .colorControls: number("saturation") == 1 && number("brightness") == 0 && number("contrast") == 1
        case .exposureAdjust: number("ev") == 0
        case .colorCube: cube == nil
        case .sharpenLuminance: number("sharpness") == 0 || number("radius") <= 0
        case .vignette: number("intensity") == 0 || number("radius") >= 2
        case .whitePointAdjust: color.red == 1 && color.green == 1 && color.blue == 1
        case .chromaKey, .lumaThreshold: false
        case .grain: number("amount") == 0
        case .glitch: number("intensity") == 0 || (number("shift") == 0 && (number("bands") < 0.5 || number("bandOffset") == 0))
        }
    }

    /// How far (in the filter's pixels) the filter spreads a pixel: what a layer's drawing
    /// must grow by so a blur is not cut off at its edges.
    package var spread: Double {
        switch kind {
        case .gaussianBlur: 3 * number("radius")
        case .glitch: number("shift") * number("intensity")
        default: 0
        }
    }
}

extension FilterParameter.Kind {
    var noun: String {
        switch self {
        case .number: "a number"
        case .color: "a colour"
        case .file: "a .cube file"
        }
    }
}

extension FilterValue {
    var noun: String {
        switch self {
        case .number: "a number"
        case .color: "a colour"
        case .cube: "a LUT"
        }
    }
}
