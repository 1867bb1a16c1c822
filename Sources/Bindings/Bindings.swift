import Engine
import ScriptHost
