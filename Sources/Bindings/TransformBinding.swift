import CMoonLua
import MoonreelEngine
import MoonreelScriptHost

/// `av.transform`: 2-D affine transforms (CGAffineTransform), immutable and chainable.
extension API {
    func makeTransformClass() -> LuaClass {
        let luaClass = LuaClass("Transform", doc: "An affine transform {a, b, c, d, tx, ty}; methods return new transforms.")
        luaClass.describe = { ($0 as? TransformBox).map { "Transform\($0.transform)" } ?? "Transform" }
        for (name, read) in [("a", \AffineTransform.a), ("b", \.b), ("c", \.c), ("d", \.d), ("tx", \.tx), ("ty", \.ty)] {
            luaClass.property(name, of: TransformBox.self) { call, box in call.push(box.transform[keyPath: read]) }
        }
        luaClass.property("isIdentity", of: TransformBox.self) { call, box in call.push(box.transform.isIdentity) }
        luaClass.method("translated", of: TransformBox.self, readOnly: true, doc: "t:translated(x, y)") { call, box in
            try call.push(transform: box.transform.translatedBy(try call.finite(2), try call.finite(3))); return 1
        }
        luaClass.method("scaled", of: TransformBox.self, readOnly: true, doc: "t:scaled(sx [, sy])") { call, box in
            let sx = try call.finite(2)
            let sy = call.isNoneOrNil(3) ? sx : try call.finite(3)
            try call.push(transform: box.transform.scaledBy(sx, sy)); return 1
        }
        luaClass.method("rotated", of: TransformBox.self, readOnly: true, doc: "t:rotated(radians), clockwise on screen") { call, box in
            try call.push(transform: box.transform.rotatedBy(try call.finite(2))); return 1
        }
        luaClass.method("concat", of: TransformBox.self, readOnly: true, doc: "t:concat(u): t then u") { call, box in
            try call.push(transform: box.transform.concatenating(try call.affineTransform(2))); return 1
        }
        luaClass.method("inverted", of: TransformBox.self, readOnly: true, doc: "t:inverted(), or an error if not invertible") { call, box in
            guard let inverse = box.transform.inverted() else { throw LuaArgumentError("transform \(box.transform) is not invertible") }
            try call.push(transform: inverse); return 1
        }
        luaClass.method("apply", of: TransformBox.self, readOnly: true, doc: "t:apply{x, y}: the transformed point") { call, box in
            call.push(point: box.transform.apply(try call.point(2))); return 1
        }
        luaClass.document([
            "a": "x scale and rotation part: x' = a·x + c·y + tx", "b": "y' = b·x + d·y + ty", "c": "x' = a·x + c·y + tx",
            "d": "y scale and rotation part: y' = b·x + d·y + ty", "tx": "x translation", "ty": "y translation",
            "isIdentity": "true for the transform that changes nothing",
        ])
        luaClass.example = """
            -- Each step applies before the ones already there (CGAffineTransform's translatedBy,
            -- scaledBy): read the chain from the right. Half size, then 960 px right: the right half.
            local t = av.transform():translated(960, 0):scaled(0.5)
            li:setTransform(t, 0)
            """
        return luaClass
    }

    var transformFunction: AVFunction {
        ("transform", "av.transform() or av.transform{a, b, c, d, tx, ty}", { call in
            try call.push(transform: call.isNoneOrNil(1) ? .identity : try call.affineTransform(1))
            return 1
        })
    }
}

extension Binding {
    static let transform = Binding(classes: [.init(TransformBox.self) { $0.makeTransformClass() }], functions: { [$0.transformFunction] })
}
