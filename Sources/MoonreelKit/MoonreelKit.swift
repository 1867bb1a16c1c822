@_exported import Engine
@_exported import ScriptHost
@_exported import Bindings
