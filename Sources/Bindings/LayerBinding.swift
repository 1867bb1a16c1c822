import CMoonLua
import CMoonLuaShim
import MoonreelEngine
import MoonreelPlatform
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
        luaClass.footprint = { object in
            guard let layer = object as? Layer else { return Footprint.record }
            let text = (layer as? TextLayer)?.style.string.utf8.count ?? 0
            let sound = (layer as? SoundLayer)?.visual.storedBytes ?? 0
            return 2 * Footprint.record + text + sound + 8 * layer.sublayers.count + Footprint.record * layer.filters.count
                + layer.animations.reduce(0) { $0 + Footprint.record + ($1.key?.utf8.count ?? 0) + $1.animation.footprint }
        }
        func geometry<Value>(_ name: String, _ keyPath: WritableKeyPath<LayerProperties, Value>, doc: String,
                             push: @escaping (LuaCall, Value) throws -> Void, read: @escaping (LuaCall, Int32) throws -> Value) {
            luaClass.property(name, of: Layer.self, doc: doc,
                              get: { call, layer in try push(call, layer.properties[keyPath: keyPath]) },
                              set: { call, layer, index in layer.properties[keyPath: keyPath] = try read(call, index) })
        }
        geometry("frame", \.frame, doc: "{x, y, width, height} in the superlayer", push: { $0.push(rect: $1) }, read: { try $0.rect($1) })
        geometry("bounds", \.bounds, doc: "{x, y, width, height}, the layer's own space", push: { $0.push(rect: $1) }, read: { try $0.rect($1) })
        geometry("position", \.position, doc: "{x, y} of the anchor point in the superlayer", push: { $0.push(point: $1) }, read: { try $0.point($1) })
        geometry("anchorPoint", \.anchorPoint, doc: "{x, y} in 0…1 of the bounds", push: { $0.push(point: $1) }, read: { try $0.point($1) })
        geometry("transform", \.transform, doc: "av.transform about the anchor point", push: { try $0.push(transform: $1) }, read: { try $0.affineTransform($1) })
        geometry("opacity", \.opacity, doc: "0…1, applied to the layer and its sublayers as a group", push: { $0.push($1) }, read: { try $0.unit($1) })
        geometry("isHidden", \.isHidden, doc: "true hides the layer and its sublayers", push: { $0.push($1) }, read: { try $0.boolean($1) })
        geometry("backgroundColor", \.backgroundColor, doc: "colour", push: { $0.push(color: $1) }, read: { try $0.color($1) })
        geometry("borderColor", \.borderColor, doc: "colour", push: { $0.push(color: $1) }, read: { try $0.color($1) })
        geometry("cornerRadius", \.cornerRadius, doc: "pixels", push: { $0.push($1) }, read: { try $0.nonNegative($1) })
        geometry("borderWidth", \.borderWidth, doc: "pixels, drawn inside the bounds", push: { $0.push($1) }, read: { try $0.nonNegative($1) })
        geometry("masksToBounds", \.masksToBounds, doc: "clip sublayers to the (rounded) bounds", push: { $0.push($1) }, read: { try $0.boolean($1) })
        geometry("name", \.name, doc: "what the layer is called (CALayer.name); diagnostics about it name it so",
                 push: { call, name in if let name { call.push(name) } else { call.pushNil() } },
                 read: { call, index in call.isNoneOrNil(index) ? nil : try call.text(index) })
        geometry("zPosition", \.zPosition, doc: "higher draws on top of its siblings", push: { $0.push($1) }, read: { try $0.finite($1) })
        for name in ["isGeometryFlipped", "geometryFlipped"] {
            geometry(name, \.isGeometryFlipped, doc: "true: sublayers are placed from the top-left, y down (UIKit's way); false (default): from the bottom-left, y up, as Core Animation does in AVFoundation exports. Relative to the parent's space: flipped inside flipped is y up again (docs/porting-from-ios.md)",
                     push: { $0.push($1) }, read: { try $0.boolean($1) })
        }
        luaClass.property("contents", of: Layer.self, doc: "av.image(path) or nil",
                          get: { call, layer in
                              if let source = layer.contents { try call.push(ImageBox(source)) } else { call.pushNil() }
                          },
                          set: { call, layer, index in
                              if call.type(index) == LUA_TSTRING {
                                  throw call.argumentError(index, "Image expected, got a string: pass av.image(\(LuaState.string(call.L, at: index).quotedForMessage()))")
                              }
                              layer.contents = call.isNoneOrNil(index) ? nil : (try call.object(index, ImageBox.self)).source
                          })
        luaClass.property("contentsGravity", of: Layer.self, doc: ContentsGravity.allCases.map(\.rawValue).joined(separator: ", "),
                          get: { call, layer in call.push(layer.contentsGravity.rawValue) },
                          set: { call, layer, index in layer.contentsGravity = try call.choice(index, ContentsGravity.self) })
        luaClass.property("sublayers", of: Layer.self, doc: "array, in drawing order",
                          get: { call, layer in try call.pushArray(layer.sublayers) { try call.push($0) } },
                          set: { call, layer, index in
                              let layers = try call.array(index, of: Layer.self, changed: true)
                              try call.model { try layer.setSublayers(layers) }
                          })
        luaClass.property("mask", of: Layer.self, doc: "a layer whose alpha decides where this one and its sublayers show (CALayer.mask): placed in this layer's bounds as a sublayer would be, never drawn itself; it must not be a sublayer anywhere; nil: none",
                          get: { call, layer in
                              if let mask = layer.mask { try call.push(mask) } else { call.pushNil() }
                          },
                          set: { call, layer, index in
                              let mask: Layer? = call.isNoneOrNil(index) ? nil : try call.changedObject(index, Layer.self)
                              try call.model { try layer.setMask(mask) }
                          })
        luaClass.property("superlayer", of: Layer.self) { call, layer in
            if let parent = layer.superlayer { try call.push(parent) } else { call.pushNil() }
        }
        luaClass.property("animationKeys", of: Layer.self) { call, layer in call.pushArray(layer.animationKeys) { call.push($0) } }
        luaClass.method("addSublayer", of: Layer.self, doc: "layer:addSublayer(sublayer): drawn above the others") { call, layer in
            let sublayer: Layer = try call.changedObject(2, Layer.self)
            try call.model { try layer.addSublayer(sublayer) }
            return 0
        }
        luaClass.method("insertSublayer", of: Layer.self, doc: "layer:insertSublayer(sublayer, index): 1-based drawing position") { call, layer in
            let sublayer: Layer = try call.changedObject(2, Layer.self)
            let position = try call.integer(3)
            guard position >= 1, position <= layer.sublayers.count + 1 else {
                throw call.argumentError(3, "index must be in 1…\(layer.sublayers.count + 1), got \(position)")
            }
            try call.model { try layer.insertSublayer(sublayer, at: position - 1) }
            return 0
        }
        luaClass.method("removeFromSuperlayer", of: Layer.self, doc: "layer:removeFromSuperlayer()") { call, layer in
            layer.removeFromSuperlayer()
            return 0
        }
        luaClass.method("addAnimation", of: Layer.self, doc: "layer:addAnimation(animation [, key]): a key replaces the animation with the same key") { call, layer in
            let api = try call.api()
            let box: AnimationBox = try call.object(2, AnimationBox.self)
            let key = try call.optionalString(3)
            if box.spec.keyPath.isTextOnly, !(layer is TextLayer) {
                throw call.argumentError(2, "keyPath \(box.spec.keyPath.rawValue) animates text layers only")
            }
            let built = try api.layerAnimation(call, box, argument: 2)
            try call.model { try layer.addAnimation(built, forKey: key) }
            try api.reportOvershoot(call, built, on: layer)
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
        luaClass.method("textProblems", of: Layer.self, readOnly: true, doc: "layer:textProblems() → {{kind=, level=, message=, time=}, …}: what an export would say of the text of this layer and its sublayers (textTruncated, textOverflow warnings; textShrunk notes), before any export") { call, layer in
            let found = try call.engine { try TextFit.diagnostics(under: layer) }
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
                          push: @escaping (LuaCall, Value) throws -> Void, read: @escaping (LuaCall, Int32) throws -> Value) {
            luaClass.property(name, of: TextLayer.self, doc: doc,
                              get: { call, text in try push(call, text.style[keyPath: keyPath]) },
                              set: { call, text, index in text.style[keyPath: keyPath] = try read(call, index) })
        }
        style("string", \.string, doc: "the text (UTF-8)", push: { $0.push($1) }, read: { try $0.text($1) })
        style("font", \.fontFamily, doc: "font family, e.g. \"Noto Sans CJK JP\", or a .ttf/.otf/.ttc file's path (in an effect: a file it ships, effect.asset(\"Inter.ttf\")), whose family is used",
              push: { $0.push($1) }, read: { try $0.fontFamily($1) })
        style("fontSize", \.fontSize, doc: "pixels", push: { $0.push($1) }, read: { try $0.bounded($1, 1...2000) })
        style("fontWeight", \.fontWeight, doc: "100…900 or \"bold\"/\"normal\"", push: { $0.push($1) }, read: { try $0.weight($1) })
        style("isItalic", \.isItalic, doc: "italic or oblique", push: { $0.push($1) }, read: { try $0.boolean($1) })
        style("foregroundColor", \.foregroundColor, doc: "text colour", push: { $0.push(color: $1) }, read: { try $0.color($1) })
        style("alignmentMode", \.alignment, doc: TextAlignment.allCases.map(\.rawValue).joined(separator: ", "), push: { $0.push($1.rawValue) }, read: { try $0.choice($1, TextAlignment.self) })
        style("isWrapped", \.isWrapped, doc: "wrap inside the layer's width", push: { $0.push($1) }, read: { try $0.boolean($1) })
        style("maxLines", \.maxLines, doc: "0: unlimited", push: { $0.push($1) }, read: { try $0.whole($1, 0...1000) })
        style("minimumScaleFactor", \.minimumScaleFactor, doc: "0.1…1: how far the font may shrink so the text fits before it is cut (UILabel's); 1: never",
              push: { $0.push($1) }, read: { try $0.bounded($1, 0.1...1) })
        style("truncationMode", \.truncationMode, doc: TruncationMode.allCases.map(\.rawValue).joined(separator: ", "), push: { $0.push($1.rawValue) }, read: { try $0.choice($1, TruncationMode.self) })
        style("lineSpacing", \.lineSpacing, doc: "extra pixels between lines", push: { $0.push($1) }, read: { try $0.bounded($1, -500...500) })
        style("shadowColor", \.shadowColor, doc: "colour", push: { $0.push(color: $1) }, read: { try $0.color($1) })
        style("shadowOpacity", \.shadowOpacity, doc: "0…1 (0: no shadow)", push: { $0.push($1) }, read: { try $0.unit($1) })
        style("shadowOffset", \.shadowOffset, doc: "{width, height} in pixels, in the layer's space (y up unless flipped: negative height is down)", push: { $0.push(size: $1) }, read: { try $0.size($1, positive: false) })
        style("shadowRadius", \.shadowRadius, doc: "blur radius in pixels", push: { $0.push($1) }, read: { try $0.bounded($1, 0...200) })
        style("strokeColor", \.strokeColor, doc: "outline colour", push: { $0.push(color: $1) }, read: { try $0.color($1) })
        style("strokeWidth", \.strokeWidth, doc: "outline width in pixels (0: none)", push: { $0.push($1) }, read: { try $0.bounded($1, 0...200) })
        style("highlightedScalars", \.highlightedScalars, doc: "karaoke: leading characters drawn in highlightColor", push: { $0.push($1) }, read: { try $0.whole($1, 0...65_536) })
        luaClass.property("highlightColor", of: TextLayer.self, doc: "karaoke colour of the sung part",
                          get: { call, text in if let c = text.style.highlightColor { call.push(color: c) } else { call.pushNil() } },
                          set: { call, text, index in text.style.highlightColor = call.isNoneOrNil(index) ? nil : try call.color(index) })
        luaClass.method("preferredFrameSize", of: TextLayer.self, readOnly: true,
                        doc: "text:preferredFrameSize([width]) → {width, height}: the size its text takes as drawn (CALayer's preferredFrameSize): one line per paragraph, or, when isWrapped (or truncated), wrapped at width (default: the layer's); a layer that size shows it whole, with no textOverflow warning") { call, text in
            let api = try call.api()
            let wrapWidth: Double?
            if text.style.isWrapped || text.style.truncationMode != .none {
                wrapWidth = call.isNoneOrNil(2) ? text.properties.bounds.size.width : try call.bounded(2, 1...Double(PixelLimits.maxSide))
            } else {
                wrapWidth = nil
            }
            let size = try call.engine {
                guard let layout = api.textLayout else { throw EngineError("no text layout could be made (Pango font map)") }
                return try layout.measuredSize(text.style, wrapWidth: wrapWidth)
            }
            call.push(size: size)
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
        luaClass.footprint = { object in
            guard let source = (object as? ImageBox)?.source else { return Footprint.record }
            return Footprint.record + source.path.utf8.count + (source.pixels == nil ? 0 : 4 * source.width * source.height)
        }
        luaClass.property("url", of: ImageBox.self) { call, box in call.push(box.source.path) }
        luaClass.method("write", of: ImageBox.self, doc: "image:write(path): saves the picture as .png, .jpg or .webp (an existing file only with --overwrite)") { call, box in
            let api = try call.api()
            let path = try call.filePath(2)
            let pixels = try box.source.pixels ?? call.engine { try ImageLoader.load(box.source.path) }
            try call.engine { try ImageGenerator.write(pixels, to: path, overwrite: api.policy.overwriteOutputs, readFiles: api.readFiles) }
            return 0
        }
        luaClass.property("size", of: ImageBox.self) { call, box in
            call.push(size: Size(width: Double(box.source.width), height: Double(box.source.height)))
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
        luaClass.property("videoLayer", of: AnimationTool.self) { call, tool in try call.push(tool.videoLayer) }
        luaClass.property("parentLayer", of: AnimationTool.self) { call, tool in try call.push(tool.parentLayer) }
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

    /// The metatable of colour values (named, so colours keep their methods when they are
    /// passed to an effect's state).
    func installColorMetatable() {
        let L = lua.L
        _ = luaL_newmetatable(L, API.colorMetatable)            // color mt (with __name)
        lua_createtable(L, 0, 2)                                 // color mt methods
        for name in ["withAlphaComponent", "colorWithAlphaComponent"] {
            lua.setFunction(name, qualifiedName: name) { call in
                var changed = try call.color(1)
                changed.alpha = try call.unit(2)
                call.pushColorValue(changed)
                return 1
            }
        }
        lua_setfield(L, -2, "__index")                           // color mt
        moon_pop(L, 1)
    }

    static let colorMetatable = "moonreel.ColorValue"

    var layerFunctions: [AVFunction] {
        [
            ("layer", "av.layer{frame=, backgroundColor=, contents=, opacity=, ...}", { call in
                let made = Layer()
                made.origin = try call.api().scriptLine(call.L)
                try call.applyProperties(1, to: made, of: Layer.self)
                try call.push(made)
                return 1
            }),
            ("textLayer", "av.textLayer{string=, font=, fontSize=, foregroundColor=, alignmentMode=, frame=, ...}", { call in
                let made = TextLayer()
                made.origin = try call.api().scriptLine(call.L)
                try call.applyProperties(1, to: made, of: TextLayer.self)
                try call.push(made)
                return 1
            }),
            ("color", "av.color(name, \"#RRGGBB\" or {r, g, b, a} [, alpha]): a colour value; c:withAlphaComponent(a) gives it another alpha (UIColor's colorWithAlphaComponent)", { call in
                var made = try call.color(1)
                if !call.isNoneOrNil(2) { made.alpha = try call.unit(2) }
                call.pushColorValue(made)
                return 1
            }),
            ("image", "av.image(path): a PNG, JPEG, WebP or binary PGM (a luma wipe's grey picture) for layer contents (in an effect: a file it ships, av.image(effect.asset(\"grain.png\")))", { call in
                let api = try call.api()
                let path = try call.readablePath(1)
                api.readFiles.record(path)
                do {
                    let header = try ImageLoader.probe(path)
                    if header.isAnimated, header.kind == .webp {
                        throw EngineError("image \"\(path)\": an animated WebP, which the decoder cannot read; convert it to a PNG (one frame) or a video")
                    }
                    if header.isAnimated {
                        try api.policy.report(Diagnostic(.optionIgnored, .warning, "\(Paths.name(of: path).quotedForMessage(limit: 60)) is an animated PNG: layers draw its first frame only",
                                                         remedy: "convert it to a video (ffmpeg -i in.png out.mp4) and add it as a clip"), at: call.L)
                    }
                    if header.colorProfile != .none, let said = try ImageLoader.profileDiagnostic(path) {
                        try api.policy.report(said, at: call.L)
                    }
                    let size = header.uprightSize
                    try call.push(ImageBox(ImageSource(path: path, width: Int(size.width), height: Int(size.height))))
                } catch let error as EngineError {
                    throw call.argumentError(1, error.message, cause: error)
                }
                return 1
            }),
            ("animationTool", "av.animationTool{videoLayer=, parentLayer=}", { call in
                let api = try call.api()
                guard call.type(1) == LUA_TTABLE else { throw call.typeError(1, expected: "table {videoLayer=, parentLayer=}") }
                try call.forEachField(of: 1) { key in
                    guard key == "videoLayer" || key == "parentLayer" else { throw call.argumentError(1, "unknown AnimationTool property \(key.quotedForMessage())") }
                }
                call.pushField(of: 1, "videoLayer")
                let video: Layer = try call.object(call.absolute(-1), api.classes[Layer.self])
                call.pushField(of: 1, "parentLayer")
                let parent: Layer = try call.object(call.absolute(-1), api.classes[Layer.self])
                call.pop(2)
                try call.push(try call.model { try AnimationTool(videoLayer: video, parentLayer: parent) })
                return 1
            }),
        ]
    }
}

extension LuaCall {
    /// A colour as a table `{r=, g=, b=, a=}` with the methods of `av.color` values.
    func pushColorValue(_ value: Color) {
        pushRecord {
            for (name, component) in [("r", value.red), ("g", value.green), ("b", value.blue), ("a", value.alpha)] {
                push(component); setField(name)
            }
        }
        _ = moon_getmetatable_named(L, API.colorMetatable)
        lua_setmetatable(L, -2)
    }
}

extension Binding {
    static let layer = Binding(classes: [
        .init(Layer.self) { $0.makeLayerClass() }, .init(TextLayer.self) { $0.makeTextLayerClass() },
        .init(ImageBox.self) { $0.makeImageClass() }, .init(AnimationTool.self) { $0.makeAnimationToolClass() },
    ], functions: { $0.layerFunctions }, install: { $0.installColorMetatable() })
}
