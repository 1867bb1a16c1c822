import CMoonLua
import CMoonLuaShim

/// The files an effect ships (`effect.asset("grain.png")`): an effect that is a folder
/// (`NAME/init.lua`) may read the plain files inside that folder and nothing else. A path
/// is accepted only when its real path (every symlink resolved) lies inside the folder's
/// real path, so `..`, absolute paths and links leading out are refused however spelled.
package enum EffectAssets {
    /// `effect.asset(relative)` in an effect's state: the absolute real path of a file in
    /// the effect's folder, or an error naming the effect and the path.
    static func resolve(_ call: LuaCall, in state: LuaState) throws -> String {
        let effect = state.effectName ?? "?"
        func refuse(_ shown: String, _ why: String) -> PositionedFromScript {
            PositionedFromScript("effect \"\(effect)\": effect.asset(\(shown)) refused: \(why)")
        }
        guard call.type(1) == LUA_TSTRING else {
            throw refuse("…", "it takes the file's path inside the effect's folder as a string, got a \(String(cString: lua_typename(call.L, call.type(1))))")
        }
        var length = 0
        guard let raw = lua_tolstring(call.L, 1, &length) else { throw refuse("…", "no path") }
        let bytes = UnsafeRawBufferPointer(start: raw, count: length).bindMemory(to: UInt8.self)
        guard let relative = String(validating: bytes, as: UTF8.self), !bytes.contains(0) else {
            throw refuse(quoted(String(decoding: bytes, as: UTF8.self)), "a path must be UTF-8 text without NUL bytes")
        }
        let shown = quoted(relative)
        guard let folder = state.effectFolder else {
            throw refuse(shown, state.effectLocation == "bundled"
                         ? "a bundled effect ships no files"
                         : "a single-file effect ships no files; make it a folder \(effect)/ with init.lua and its files beside it")
        }
        guard !relative.isEmpty else { throw refuse(shown, "name a file in the effect's folder") }
        guard !relative.hasPrefix("/") else { throw refuse(shown, "an absolute path; name a file inside the effect's folder (\(folder))") }
        guard !relative.split(separator: "/").contains("..") else {
            throw refuse(shown, "'..' would lead outside the effect's folder (\(folder))")
        }
        let path = folder + "/" + relative
        guard FileSystem.kind(of: path) == .file else {
            throw refuse(shown, FileSystem.kind(of: path) == .missing
                         ? "no such file in the effect's folder (\(folder))" : "not a plain file (in \(folder))")
        }
        guard let real = FileSystem.realPath(path), isInside(real, folder: folder) else {
            throw refuse(shown, "it is a link leading outside the effect's folder (\(folder))")
        }
        return real
    }

    /// Whether `path` (as given to av.image or a LUT filter) is a file that the effect
    /// running in `state` ships: its real path lies inside the effect's folder.
    package static func isShipped(_ path: String, by state: LuaState) -> Bool {
        guard let folder = state.effectFolder, FileSystem.kind(of: path) == .file, let real = FileSystem.realPath(path) else { return false }
        return isInside(real, folder: folder)
    }

    private static func isInside(_ realFile: String, folder: String) -> Bool {
        guard let realFolder = FileSystem.realPath(folder) else { return false }
        return realFile.hasPrefix(realFolder.hasSuffix("/") ? realFolder : realFolder + "/")
    }

    /// The folder of an effect found at `location` ("…/NAME/init.lua"), or nil for a single
    /// file ("…/NAME.lua") or a bundled effect.
    static func folder(ofEffectAt location: String) -> String? {
        let suffix = "/init.lua"
        guard location.hasSuffix(suffix) else { return nil }
        return String(location.dropLast(suffix.count))
    }

    /// `"name"` for a message: control characters escaped, at most 60 characters shown.
    private static func quoted(_ text: String) -> String {
        var shown = ""
        for scalar in text.unicodeScalars.prefix(60) {
            shown += scalar.value < 0x20 || scalar == "\"" || scalar == "\\" ? scalar.escaped(asASCII: true) : String(scalar)
        }
        return "\"" + shown + (text.unicodeScalars.count > 60 ? "…\"" : "\"")
    }
}
