import CMoonLua
import CMoonLuaShim
import MoonreelEngine
import MoonreelScriptHost

/// `av.layer`, `av.textLayer`, `av.image` and `av.animationTool` (CALayer, CATextLayer,
/// AVVideoCompositionCoreAnimationTool). Geometry is Core Animation's, in pixels: origin at
/// the bottom-left and y up, unless an ancestor sets `isGeometryFlipped`.
final class ImageBox { let source: ImageSource; init(_ source: ImageSource) { self.source = source } }

extension API {
    func makeLayerClass() -> LuaClass {
        let luaClass = LuaClass("Layer", doc: "A rectangle drawn over or under the video: colour, border, image contents, sublayers, animations.")
        luaClass.describe = { object in
            guard let layer = object as? Layer else { return "Layer" }
            let f = layer.frame
            let kind = layer is TextLayer ? "TextLayer" : "Layer"
            return "\(kind)(\(format(f.x)), \(format(f.y)), \(format(f.width))×\(format(f.height)), \(layer.sublayers.count) sublayers, \(layer.animations.count) animations)"
        }
        func geometry<Value>(_ name: String, _ keyPath: WritableKeyPath<LayerProperties, Value>, doc: String,
                             push: @escaping (LuaCall, Value) -> Void, read: @escaping (LuaCall, Int32) throws -> Value) {
            luaClass.property(name, of: Layer.self, doc: doc,
                              get: { call, layer in push(call, layer.properties[keyPath: keyPath]) },
                              set: { call, layer, index in layer.properties[keyPath: keyPath] = try read(call, index) })
        }
        geometry("frame", \.frame, doc: "{x, y, width, height} in the superlayer", push: { [unowned self] in push($0, rect: $1) }, read: { [unowned self] in try rect($0, $1) })
        geometry("bounds", \.bounds, doc: "{x, y, width, height}, the layer's own space", push: { [unowned self] in push($0, rect: $1) }, read: { [unowned self] in try rect($0, $1) })
        geometry("position", \.position, doc: "{x, y} of the anchor point in the superlayer", push: { [unowned self] in push($0, point: $1) }, read: { [unowned self] in try point($0, $1) })
        geometry("anchorPoint", \.anchorPoint, doc: "{x, y} in 0…1 of the bounds", push: { [unowned self] in push($0, point: $1) }, read: { [unowned self] in try point($0, $1) })
        geometry("transform", \.transform, doc: "av.transform about the anchor point", push: { [unowned self] in push($0, transform: $1) }, read: { [unowned self] in try affineTransform($0, $1) })
        geometry("opacity", \.opacity, doc: "0…1, applied to the layer and its sublayers as a group", push: { $0.push($1) }, read: { [unowned self] in try unit($0, $1) })
        geometry("isHidden", \.isHidden, doc: "true hides the layer and its sublayers", push: { $0.push($1) }, read: { try $0.boolean($1) })
        geometry("backgroundColor", \.backgroundColor, doc: "colour", push: { [unowned self] in push($0, color: $1) }, read: { [unowned self] in try color($0, $1) })
        geometry("borderColor", \.borderColor, doc: "colour", push: { [unowned self] in push($0, color: $1) }, read: { [unowned self] in try color($0, $1) })
        geometry("cornerRadius", \.cornerRadius, doc: "pixels", push: { $0.push($1) }, read: { [unowned self] in try nonNegative($0, $1) })
        geometry("borderWidth", \.borderWidth, doc: "pixels, drawn inside the bounds", push: { $0.push($1) }, read: { [unowned self] in try nonNegative($0, $1) })
        geometry("masksToBounds", \.masksToBounds, doc: "clip sublayers to the (rounded) bounds", push: { $0.push($1) }, read: { try $0.boolean($1) })
        geometry("name", \.name, doc: "what the layer is called (CALayer.name); diagnostics about it name it so",
                 push: { call, name in if let name { call.push(name) } else { call.pushNil() } },
                 read: { [unowned self] call, index in call.isNoneOrNil(index) ? nil : try text(call, index) })
        geometry("zPosition", \.zPosition, doc: "higher draws on top of its siblings", push: { $0.push($1) }, read: { [unowned self] in try finite($0, $1) })
        for name in ["isGeometryFlipped", "geometryFlipped"] {
            geometry(name, \.isGeometryFlipped, doc: "true: sublayers are placed from the top-left, y down (UIKit's way); false (default): from the bottom-left, y up, as Core Animation does in AVFoundation exports. Relative to the parent's space: flipped inside flipped is y up again (docs/porting-from-ios.md)",
                     push: { $0.push($1) }, read: { try $0.boolean($1) })
        }
        luaClass.property("contents", of: Layer.self, doc: "av.image(path) or nil",
                          get: { [unowned self] call, layer in
                              if let source = layer.contents { push(call, ImageBox(source)) } else { call.pushNil() }
                          },
                          set: { [unowned self] call, layer, index in
                              if call.type(index) == LUA_TSTRING {
                                  throw call.argumentError(index, "Image expected, got a string: pass av.image(\(LuaState.string(call.L, at: index).quotedForMessage()))")
                              }
                              layer.contents = call.isNoneOrNil(index) ? nil : (try call.object(index, classes[ImageBox.self], as: ImageBox.self)).source
                          })
        luaClass.property("contentsGravity", of: Layer.self, doc: ContentsGravity.allCases.map(\.rawValue).joined(separator: ", "),
                          get: { call, layer in call.push(layer.contentsGravity.rawValue) },
                          set: { [unowned self] call, layer, index in layer.contentsGravity = try choice(call, index, ContentsGravity.self) })
        luaClass.property("sublayers", of: Layer.self, doc: "array, in drawing order",
                          get: { [unowned self] call, layer in call.pushArray(layer.sublayers) { push(call, $0) } },
                          set: { [unowned self] call, layer, index in
                              let layers = try array(call, index, of: classes[Layer.self], as: Layer.self, changed: true)
                              try model(call) { try layer.setSublayers(layers) }
                          })
        luaClass.property("mask", of: Layer.self, doc: "a layer whose alpha decides where this one and its sublayers show (CALayer.mask): placed in this layer's bounds as a sublayer would be, never drawn itself; it must not be a sublayer anywhere; nil: none",
                          get: { [unowned self] call, layer in
                              if let mask = layer.mask { push(call, mask) } else { call.pushNil() }
                          },
                          set: { [unowned self] call, layer, index in
                              let mask: Layer? = call.isNoneOrNil(index) ? nil : try call.changedObject(index, classes[Layer.self])
                              try model(call) { try layer.setMask(mask) }
                          })
        luaClass.property("superlayer", of: Layer.self) { [unowned self] call, layer in
            if let parent = layer.superlayer { push(call, parent) } else { call.pushNil() }
        }
        luaClass.property("animationKeys", of: Layer.self) { call, layer in call.pushArray(layer.animationKeys) { call.push($0) } }
        luaClass.method("addSublayer", of: Layer.self, doc: "layer:addSublayer(sublayer): drawn above the others") { [unowned self] call, layer in
            let sublayer: Layer = try call.changedObject(2, classes[Layer.self])
            try model(call) { try layer.addSublayer(sublayer) }
            return 0
        }
        luaClass.method("insertSublayer", of: Layer.self, doc: "layer:insertSublayer(sublayer, index): 1-based drawing position") { [unowned self] call, layer in
            let sublayer: Layer = try call.changedObject(2, classes[Layer.self])
            let position = try call.integer(3)
            guard position >= 1, position <= layer.sublayers.count + 1 else {
                throw call.argumentError(3, "index must be in 1…\(layer.sublayers.count + 1), got \(position)")
            }
            try model(call) { try layer.insertSublayer(sublayer, at: position - 1) }
            return 0
        }
        luaClass.method("removeFromSuperlayer", of: Layer.self, doc: "layer:removeFromSuperlayer()") { call, layer in
            layer.removeFromSuperlayer()
            return 0
        }
        luaClass.method("addAnimation", of: Layer.self, doc: "layer:addAnimation(animation [, key]): a key replaces the animation with the same key") { [unowned self] call, layer in
            let box: AnimationBox = try call.object(2, classes[AnimationBox.self])
            let key = try call.optionalString(3)
            if box.spec.keyPath.isTextOnly, !(layer is TextLayer) {
                throw call.argumentError(2, "keyPath \(box.spec.keyPath.rawValue) animates text layers only")
            }
            let built = try layerAnimation(call, box, argument: 2)
            try model(call) { try layer.addAnimation(built, forKey: key) }
            return 0
        }
        luaClass.alias("add", of: "addAnimation")
        luaClass.method("removeAnimation", of: Layer.self, doc: "layer:removeAnimation(key)") { call, layer in
            layer.removeAnimation(forKey: try call.string(2))
            return 0
        }
        luaClass.method("removeAllAnimations", of: Layer.self, doc: "layer:removeAllAnimations()") { call, layer in
            layer.removeAllAnimations()
            return 0
        }
        luaClass.method("textProblems", of: Layer.self, readOnly: true, doc: "layer:textProblems() → {{kind=, level=, message=, time=}, …}: what an export would say of the text of this layer and its sublayers (textTruncated, textOverflow warnings; textShrunk notes), before any export") { [unowned self] call, layer in
            let found = try engine(call) { try TextFit.diagnostics(under: layer) }
            call.pushArray(found) { diagnostic in
                call.pushRecord {
                    call.push(diagnostic.kind.rawValue); call.setField("kind")
                    call.push(diagnostic.level.rawValue); call.setField("level")
                    call.push(diagnostic.text); call.setField("message")
                    if let time = diagnostic.time { call.push(time); call.setField("time") }
                }
            }
            return 1
        }
        luaClass.document([
            "animationKeys": "the keys of its animations",
            "superlayer": "the layer it is a sublayer of, or nil",
        ])
        luaClass.example = """
            -- Core Animation geometry: y up from the bottom-left, unless a parent is flipped.
            local badge = av.layer{ frame = {20, 20, 200, 60}, backgroundColor = "systemRed", cornerRadius = 12 }
            parent:addSublayer(badge)            -- 20 px from the left and from the bottom
            """
        return luaClass
    }

    func makeTextLayerClass() -> LuaClass {
        let luaClass = LuaClass("TextLayer", parent: classes[Layer.self], doc: "A layer that draws text with Pango (CJK and complex scripts, fallback fonts, wrapping, outline, shadow).")
        func style<Value>(_ name: String, _ keyPath: WritableKeyPath<TextStyle, Value>, doc: String,
                          push: @escaping (LuaCall, Value) -> Void, read: @escaping (LuaCall, Int32) throws -> Value) {
            luaClass.property(name, of: TextLayer.self, doc: doc,
                              get: { call, text in push(call, text.style[keyPath: keyPath]) },
                              set: { call, text, index in text.style[keyPath: keyPath] = try read(call, index) })
        }
        style("string", \.string, doc: "the text (UTF-8)", push: { $0.push($1) }, read: { [unowned self] in try text($0, $1) })
        style("font", \.fontFamily, doc: "font family, e.g. \"Noto Sans CJK JP\", or a .ttf/.otf/.ttc file's path (in an effect: a file it ships, effect.asset(\"Inter.ttf\")), whose family is used",
              push: { $0.push($1) }, read: { [unowned self] in try fontFamily($0, $1) })
        style("fontSize", \.fontSize, doc: "pixels", push: { $0.push($1) }, read: { [unowned self] in try bounded($0, $1, 1...2000) })
        style("fontWeight", \.fontWeight, doc: "100…900 or \"bold\"/\"normal\"", push: { $0.push($1) }, read: { [unowned self] in try weight($0, $1) })
        style("isItalic", \.isItalic, doc: "italic or oblique", push: { $0.push($1) }, read: { try $0.boolean($1) })
        style("foregroundColor", \.foregroundColor, doc: "text colour", push: { [unowned self] in push($0, color: $1) }, read: { [unowned self] in try color($0, $1) })
        style("alignmentMode", \.alignment, doc: TextAlignment.allCases.map(\.rawValue).joined(separator: ", "), push: { $0.push($1.rawValue) }, read: { [unowned self] in try choice($0, $1, TextAlignment.self) })
        style("isWrapped", \.isWrapped, doc: "wrap inside the layer's width", push: { $0.push($1) }, read: { try $0.boolean($1) })
        style("maxLines", \.maxLines, doc: "0: unlimited", push: { $0.push($1) }, read: { [unowned self] in Int(try bounded($0, $1, 0...1000)) })
        style("minimumScaleFactor", \.minimumScaleFactor, doc: "0.1…1: how far the font may shrink so the text fits before it is cut (UILabel's); 1: never",
              push: { $0.push($1) }, read: { [unowned self] in try bounded($0, $1, 0.1...1) })
        style("truncationMode", \.truncationMode, doc: TruncationMode.allCases.map(\.rawValue).joined(separator: ", "), push: { $0.push($1.rawValue) }, read: { [unowned self] in try choice($0, $1, TruncationMode.self) })
        style("lineSpacing", \.lineSpacing, doc: "extra pixels between lines", push: { $0.push($1) }, read: { [unowned self] in try bounded($0, $1, -500...500) })
        style("shadowColor", \.shadowColor, doc: "colour", push: { [unowned self] in push($0, color: $1) }, read: { [unowned self] in try color($0, $1) })
        style("shadowOpacity", \.shadowOpacity, doc: "0…1 (0: no shadow)", push: { $0.push($1) }, read: { [unowned self] in try unit($0, $1) })
        style("shadowOffset", \.shadowOffset, doc: "{width, height} in pixels, in the layer's space (y up unless flipped: negative height is down)", push: { [unowned self] in push($0, size: $1) }, read: { [unowned self] in try size($0, $1, positive: false) })
        style("shadowRadius", \.shadowRadius, doc: "blur radius in pixels", push: { $0.push($1) }, read: { [unowned self] in try bounded($0, $1, 0...200) })
        style("strokeColor", \.strokeColor, doc: "outline colour", push: { [unowned self] in push($0, color: $1) }, read: { [unowned self] in try color($0, $1) })
        style("strokeWidth", \.strokeWidth, doc: "outline width in pixels (0: none)", push: { $0.push($1) }, read: { [unowned self] in try bounded($0, $1, 0...200) })
        style("highlightedScalars", \.highlightedScalars, doc: "karaoke: leading characters drawn in highlightColor", push: { $0.push($1) }, read: { [unowned self] in Int(try bounded($0, $1, 0...Double(65_536))) })
        luaClass.property("highlightColor", of: TextLayer.self, doc: "karaoke colour of the sung part",
                          get: { [unowned self] call, text in if let c = text.style.highlightColor { push(call, color: c) } else { call.pushNil() } },
                          set: { [unowned self] call, text, index in text.style.highlightColor = call.isNoneOrNil(index) ? nil : try color(call, index) })
        luaClass.method("preferredFrameSize", of: TextLayer.self, readOnly: true,
                        doc: "text:preferredFrameSize([width]) → {width, height}: the size its text takes as drawn (CALayer's preferredFrameSize): one line per paragraph, or, when isWrapped (or truncated), wrapped at width (default: the layer's); a layer that size shows it whole, with no textOverflow warning") { [unowned self] call, text in
            let wrapWidth: Double?
            if text.style.isWrapped || text.style.truncationMode != .none {
                wrapWidth = call.isNoneOrNil(2) ? text.properties.bounds.size.width : try bounded(call, 2, 1...Double(PixelLimits.maxSide))
            } else {
                wrapWidth = nil
            }
            let size = try engine(call) {
                guard let layout = textLayout else { throw EngineError("no text layout could be made (Pango font map)") }
                return try layout.measuredSize(text.style, wrapWidth: wrapWidth)
            }
            push(call, size: size)
            return 1
        }
        luaClass.example = """
            local title = av.textLayer{ string = "きらきら光る", fontSize = 64, foregroundColor = "white",
                                        alignmentMode = "center", frame = {0, 100, 1920, 200},
                                        strokeColor = "black", strokeWidth = 3, shadowOpacity = 0.6 }
            parent:addSublayer(title)
            """
        return luaClass
    }

    func makeImageClass() -> LuaClass {
        let luaClass = LuaClass("Image", doc: "A still image file (PNG, JPEG, WebP) for layer contents.")
        luaClass.describe = { ($0 as? ImageBox).map { "Image(\"\($0.source.path)\", \($0.source.width)×\($0.source.height))" } ?? "Image" }
        luaClass.property("url", of: ImageBox.self) { call, box in call.push(box.source.path) }
        luaClass.method("write", of: ImageBox.self, doc: "image:write(path): saves the picture as .png, .jpg or .webp (an existing file only with --overwrite)") { [unowned self] call, box in
            let path = try filePath(call, 2)
            let pixels = try box.source.pixels ?? engine(call) { try ImageLoader.load(box.source.path) }
            try engine(call) { try ImageGenerator.write(pixels, to: path, overwrite: policy.overwriteOutputs, readFiles: readFiles) }
            return 0
        }
        luaClass.property("size", of: ImageBox.self) { [unowned self] call, box in
            push(call, size: Size(width: Double(box.source.width), height: Double(box.source.height)))
        }
        luaClass.document([
            "url": "the file it was read from (or a description of a frame in memory)",
            "size": "{width, height} upright (a JPEG's EXIF orientation applied)",
        ])
        luaClass.example = """
            local logo = av.image("logo.png")
            parent:addSublayer(av.layer{ contents = logo, frame = {20, 20, logo.size.width, logo.size.height} })
            """
        return luaClass
    }

    func makeAnimationToolClass() -> LuaClass {
        let luaClass = LuaClass("AnimationTool", doc: "Draws the composed video into videoLayer inside parentLayer's tree.")
        luaClass.describe = { _ in "AnimationTool" }
        luaClass.property("videoLayer", of: AnimationTool.self) { [unowned self] call, tool in push(call, tool.videoLayer) }
        luaClass.property("parentLayer", of: AnimationTool.self) { [unowned self] call, tool in push(call, tool.parentLayer) }
        luaClass.document([
            "videoLayer": "the layer the composed video is drawn into",
            "parentLayer": "the root of the tree, placed in the render size (origin bottom-left)",
        ])
        luaClass.example = """
            local parent = av.layer{ frame = {0, 0, 1920, 1080} }
            local video = av.layer{ frame = {0, 0, 1920, 1080} }
            parent:addSublayer(video)
            parent:addSublayer(av.textLayer{ string = "Title", frame = {0, 900, 1920, 120}, alignmentMode = "center" })
            vc.animationTool = av.animationTool{ videoLayer = video, parentLayer = parent }
            """
        return luaClass
    }

    /// Runs a layer-model call, turning its errors into Lua errors naming the function.
    func model<T>(_ call: LuaCall, _ body: () throws -> T) throws -> T {
        do { return try body() } catch let error as EngineError {
            throw LuaArgumentError("\(call.functionName): \(error.scriptMessage)", kind: error.kind.rawValue, subject: error.subject)
        }
    }

    /// A colour as a table `{r=, g=, b=, a=}` with the methods of `av.color` values.
    func pushColorValue(_ call: LuaCall, _ value: Color) {
        call.pushRecord {
            for (name, component) in [("r", value.red), ("g", value.green), ("b", value.blue), ("a", value.alpha)] {
                call.push(component); call.setField(name)
            }
        }
        _ = moon_getmetatable_named(call.L, API.colorMetatable)
        lua_setmetatable(call.L, -2)
    }

    /// The metatable of colour values (named, so colours keep their methods when they are
    /// passed to an effect's state).
    func installColorMetatable() {
        let L = lua.L
        _ = luaL_newmetatable(L, API.colorMetatable)            // color mt (with __name)
        lua_createtable(L, 0, 2)                                 // color mt methods
        for name in ["withAlphaComponent", "colorWithAlphaComponent"] {
            lua.setFunction(name, qualifiedName: name) { [unowned self] call in
                var changed = try color(call, 1)
                changed.alpha = try unit(call, 2)
                pushColorValue(call, changed)
                return 1
            }
        }
        lua_setfield(L, -2, "__index")                           // color mt
        moon_pop(L, 1)
    }

    static let colorMetatable = "moonreel.ColorValue"

    func choice<T: RawRepresentable & CaseIterable>(_ call: LuaCall, _ index: Int32, _ type: T.Type) throws -> T where T.RawValue == String {
        let name = try call.string(index)
        guard let value = T(rawValue: name) ?? T(rawValue: AppleNames.enumerationValue(name)) else {
            throw call.argumentError(index, "unknown value \(name.quotedForMessage()) (expected \(T.allCases.map { "\"\($0.rawValue)\"" }.joined(separator: ", ")))")
        }
        return value
    }

    var layerFunctions: [AVFunction] {
        [
            ("layer", "av.layer{frame=, backgroundColor=, contents=, opacity=, ...}", { [unowned self] call in
                let made = Layer()
                try applyProperties(call, 1, to: made, of: classes[Layer.self])
                push(call, made)
                return 1
            }),
            ("textLayer", "av.textLayer{string=, font=, fontSize=, foregroundColor=, alignmentMode=, frame=, ...}", { [unowned self] call in
                let made = TextLayer()
                try applyProperties(call, 1, to: made, of: classes[TextLayer.self])
                push(call, made)
                return 1
            }),
            ("color", "av.color(name, \"#RRGGBB\" or {r, g, b, a} [, alpha]): a colour value; c:withAlphaComponent(a) gives it another alpha (UIColor's colorWithAlphaComponent)", { [unowned self] call in
                var made = try color(call, 1)
                if !call.isNoneOrNil(2) { made.alpha = try unit(call, 2) }
                pushColorValue(call, made)
                return 1
            }),
            ("image", "av.image(path): a PNG, JPEG, WebP or binary PGM (a luma wipe's grey picture) for layer contents (in an effect: a file it ships, av.image(effect.asset(\"grain.png\")))", { [unowned self] call in
                let path = try readablePath(call, 1)
                readFiles.record(path)
                do {
                    let size = try ImageLoader.pixelSize(of: path)
                    push(call, ImageBox(ImageSource(path: path, width: Int(size.width), height: Int(size.height))))
                } catch let error as EngineError {
                    throw call.argumentError(1, error.message, cause: error)
                }
                return 1
            }),
            ("animationTool", "av.animationTool{videoLayer=, parentLayer=}", { [unowned self] call in
                guard call.type(1) == LUA_TTABLE else { throw call.typeError(1, expected: "table {videoLayer=, parentLayer=}") }
                try call.forEachField(of: 1) { key in
                    guard key == "videoLayer" || key == "parentLayer" else { throw call.argumentError(1, "unknown AnimationTool property \(key.quotedForMessage())") }
                }
                call.pushField(of: 1, "videoLayer")
                let video: Layer = try call.object(call.absolute(-1), classes[Layer.self])
                call.pushField(of: 1, "parentLayer")
                let parent: Layer = try call.object(call.absolute(-1), classes[Layer.self])
                call.pop(2)
                push(call, try model(call) { try AnimationTool(videoLayer: video, parentLayer: parent) })
                return 1
            }),
        ]
    }
}

extension Binding {
    static let layer = Binding(classes: [
        .init(Layer.self) { $0.makeLayerClass() }, .init(TextLayer.self) { $0.makeTextLayerClass() },
        .init(ImageBox.self) { $0.makeImageClass() }, .init(AnimationTool.self) { $0.makeAnimationToolClass() },
    ], functions: { $0.layerFunctions }, install: { $0.installColorMetatable() })
}
