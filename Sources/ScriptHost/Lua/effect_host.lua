-- The Lua half of the effect host, run once in every Lua state (chunk "=[moonreel effects]",
-- so errors skip its frames and name the script line that called in). Each effect module
-- runs in a Lua state of its own (see EffectBox.swift); there, this glue turns the state's
-- globals into the sandbox, loads the module and checks its metadata. In a state that
-- requires effects (the user script's, or an effect's), it wraps what `openEffect` hands
-- over in a read-only object that validates parameters before calling `apply` in the
-- effect's state. Lua rather than Swift because it handles arbitrary Lua values (defaults,
-- options) and lets errors unwind through Lua frames only.
local host = ...
local C = host.helpers
local openEffect = host.openEffect
local globals = host.globals

-- Everything below is captured now, before any script runs, so no script can change
-- what the host (or an effect) gets by replacing a global.
local type, next, pairs, error, tostring, rawget, rawequal, setmetatable, getmetatable =
      type, next, pairs, error, tostring, rawget, rawequal, setmetatable, getmetatable
local format, sub, gsub, match, byte = string.format, string.sub, string.gsub, string.match, string.byte
local concat, sort = table.concat, table.sort
local floor, huge, mathType, toInteger = math.floor, math.huge, math.type, math.tointeger
local utf8Length, utf8Offset = utf8.len, utf8.offset
local raise = C.raiseFromScript
local closestName = host.closestName

local function copy(t)
  local result = {}
  for k, v in next, t do result[k] = v end
  return result
end

-- Showing values in messages ------------------------------------------------------------

local escapes = { ['"'] = '\\"', ['\\'] = '\\\\', ['\n'] = '\\n', ['\r'] = '\\r', ['\t'] = '\\t' }
local function escape(c) return escapes[c] or format("\\%d", byte(c)) end

local function quote(s)
  local characters = utf8Length(s)
  local valid = characters ~= nil
  local long = (characters or #s) > 60
  if long then s = sub(s, 1, valid and utf8Offset(s, 58) - 1 or 57) end
  s = gsub(s, '[%c"\\]', escape)
  if not valid then s = gsub(s, "[\128-\255]", escape) end
  return '"' .. s .. (long and '…"' or '"')
end

local function showNumber(n)
  if n ~= n then return "nan" end
  if n == huge then return "inf" elseif n == -huge then return "-inf" end
  if mathType(n) == "integer" then return format("%d", n) end
  if n == floor(n) and n > -2^53 and n < 2^53 then return format("%d", toInteger(n)) end
  return format("%.14g", n)
end

local function show(value)
  local kind = type(value)
  if kind == "string" then return quote(value) end
  if kind == "number" then return showNumber(value) end
  if kind == "boolean" or kind == "nil" then return tostring(value) end
  if kind == "userdata" then return C.typeName(value) end
  if kind == "table" and rawget(value, 1) ~= nil then
    local items = {}
    for i = 1, 8 do
      local item = rawget(value, i)
      if item == nil then break end
      items[i] = type(item) == "table" and "{…}" or show(item)
    end
    if rawget(value, 9) ~= nil then items[9] = "…" end
    return "{" .. concat(items, ", ") .. "}"
  end
  return kind
end

-- Parameters ----------------------------------------------------------------------------

local typePhrases = {
  number = "a number", integer = "an integer", string = "a string", boolean = "a boolean",
  table = "a table", ["function"] = "a function",
  color = 'a color (a name, "#RRGGBB" or {r, g, b, a})', any = "any value", point = "a point {x, y}",
  size = "a size {width, height}",
}

-- The embedder's object types (image): a value is one when its metatable is named so.
local objectTypes = host.objectTypes
for name, objectType in next, objectTypes do typePhrases[name] = objectType.phrase end
local objectTypeNames = {}
for name in next, objectTypes do objectTypeNames[#objectTypeNames + 1] = name end
table.sort(objectTypeNames)
local typeNames = { "number", "integer", "string", "boolean", "table", "function", "color", "point", "size", "any" }
for i = 1, #objectTypeNames do typeNames[#typeNames + 1] = objectTypeNames[i] end
local typeList = concat(typeNames, ", ", 1, #typeNames - 1) .. " or " .. typeNames[#typeNames]

local function expectation(parameter)
  if parameter.choices then
    local shown = {}
    for i, choice in next, parameter.choices do shown[i] = show(choice) end
    return "one of " .. concat(shown, ", ")
  end
  local phrase = typePhrases[parameter.type]
  local min, max = parameter.min, parameter.max
  if min and max then return phrase .. " in " .. showNumber(min) .. "…" .. showNumber(max) end
  if min then return phrase .. " ≥ " .. showNumber(min) end
  if max then return phrase .. " ≤ " .. showNumber(max) end
  return phrase
end

-- Returns whether `value` fits, and the value to pass on (integers as integers).
local function check(parameter, value)
  local kind = parameter.type
  if kind == "any" then return true, value end
  local objectType = objectTypes[kind]
  if objectType then
    local metatable = type(value) == "userdata" and getmetatable(value)
    return type(metatable) == "table" and objectType.metatables[rawget(metatable, "__name")] == true, value
  end
  if kind == "color" then
    -- Checked by the function the embedder named (av.color), where this state has it.
    local checker = host.colorChecker
    local ok, color = pcall(function() return rawget(globals, checker.global)[checker.field] end)
    if not ok or type(color) ~= "function" then return type(value) == "string" or type(value) == "table", value end
    return (pcall(color, value)), value
  end
  if kind == "point" or kind == "size" then
    -- {x, y} or {x =, y =} ({width, height} or {width =, height =}), each within min…max
    -- (a size's above 0): passed on both ways.
    if type(value) ~= "table" then return false end
    local first, second = kind == "point" and "x" or "width", kind == "point" and "y" or "height"
    local a, b = rawget(value, 1), rawget(value, 2)
    if a == nil and b == nil then a, b = rawget(value, first), rawget(value, second) end
    for _, number in next, { a, b } do
      if type(number) ~= "number" or number ~= number or (parameter.min and number < parameter.min)
         or (parameter.max and number > parameter.max) or (kind == "size" and not (number > 0 and number < math.huge)) then
        return false
      end
    end
    return true, { a, b, [first] = a, [second] = b }
  end
  if parameter.choices then
    for _, choice in next, parameter.choices do
      if rawequal(choice, value) then return true, value end
    end
    return false
  end
  if kind ~= "number" and kind ~= "integer" then return type(value) == kind, value end
  if type(value) ~= "number" or value ~= value then return false end
  if kind == "integer" then
    value = toInteger(value)
    if value == nil then return false end
  end
  if (parameter.min and value < parameter.min) or (parameter.max and value > parameter.max) then
    return false
  end
  return true, value
end

local function namesOf(info)
  local names = {}
  for i, parameter in next, info.parameters do names[i] = parameter.name end
  return names
end

local function parameterNames(info)
  local names = namesOf(info)
  return #names > 0 and "parameters: " .. concat(names, ", ") or "it takes no parameters"
end

-- `label` starts every message (`effect "lyrics"`, or the script's parameters).
local function validate(info, options, label)
  label = label or format('effect "%s"', info.module)
  local function fail(message, ...) raise(format(label .. ": " .. message, ...)) end
  if options == nil then options = {} end
  if type(options) ~= "table" then fail("options must be a table of name = value, got %s", show(options)) end
  -- Walked with pairs: options may be a read-only view (an effect's own example, handed
  -- back), which holds nothing itself.
  local given = {}
  for key, value in pairs(options) do given[key] = value end
  if not info.declaresParameters then return given end
  local params = {}
  for key, value in next, given do
    if type(key) ~= "string" then fail("options must be name = value pairs, got the %s key %s", type(key), show(key)) end
    if info.byName[key] == nil then
      local near = closestName(key, namesOf(info))
      fail("unknown parameter %s%s (%s)", key, near and format("; did you mean %s?", near) or "", parameterNames(info))
    end
    params[key] = value
  end
  for _, parameter in next, info.parameters do
    local value = params[parameter.name]
    if value == nil then
      if parameter.required then fail("parameter %s is required (%s)", parameter.name, expectation(parameter)) end
      value = parameter.default
      -- A default is valid (checked when the effect loaded): converted as a given value is.
      if value ~= nil then value = select(2, check(parameter, value)) end
      params[parameter.name] = type(value) == "table" and copy(value) or value
    else
      local fits, converted = check(parameter, value)
      if not fits then
        fail("parameter %s must be %s, got %s", parameter.name, expectation(parameter), show(value))
      end
      -- An empty name in a row of a batch would render as "For ": a required text is not "".
      if parameter.required and converted == "" and not parameter.allowEmpty then
        fail("parameter %s is required and is empty (declare allowEmpty = true to accept \"\")", parameter.name)
      end
      params[parameter.name] = converted
    end
  end
  return params
end

-- Reads an effect's metadata (raw reads only: the table is the effect's) and checks it.
-- What av.join gives every transition effect for each join, declared for it unless it
-- declares them itself.
local transitionParameters = {
  { name = "renderSize", type = "size", min = 16, max = 16384, required = true, doc = "{width, height} of the video composition (the join gives it)" },
  { name = "start", type = "number", min = 0, max = 86400, default = 0, doc = "seconds into the composition the transition starts (the join gives it)" },
  { name = "duration", type = "number", min = 0.001, max = 3600, default = 1, doc = "seconds the transition lasts (the join gives it)" },
}

local function describe(module, definition, location, label)
  label = label or format('effect "%s"', module)
  local function fail(message, ...) raise(format(label .. ": " .. message, ...)) end
  local function text(field, container, label)
    local value = rawget(container, field)
    if value ~= nil and type(value) ~= "string" then fail("%s must be a string, got %s", label or field, show(value)) end
    return value or ""
  end
  local info = {
    module = module, location = location, parameters = {}, byName = {},
    fields = {
      name = text("name", definition), version = text("version", definition),
      description = text("description", definition), author = text("author", definition),
      license = text("license", definition), kind = text("kind", definition),
    },
  }
  if info.fields.kind ~= "" and info.fields.kind ~= "transition" then
    fail('kind must be "transition" (an effect that draws the joins of av.join) or left out, got %s', show(info.fields.kind))
  end
  if info.fields.name == "" then info.fields.name = module end
  info.requires = { moonreel = "", effects = "" }
  local requires = rawget(definition, "requires")
  if requires ~= nil then
    local shape = 'requires must be a table { moonreel = ">=1.0", effects = { name = "^1.2" } }'
    if type(requires) ~= "table" then fail("%s, got %s", shape, show(requires)) end
    for key in next, requires do
      if key ~= "moonreel" and key ~= "effects" then fail("%s, got the key %s", shape, show(key)) end
    end
    info.requires.moonreel = text("moonreel", requires, "requires.moonreel")
    local effects = rawget(requires, "effects")
    if effects ~= nil and type(effects) ~= "table" then fail("%s, got effects = %s", shape, show(effects)) end
    local lines = {}
    for name, range in next, effects or {} do
      if type(name) ~= "string" or not match(name, "^[%w_%-]+$") then
        fail("requires.effects is keyed by effect names (letters, digits, '_', '-'), got %s", show(name))
      end
      if type(range) ~= "string" or match(range, "[%c]") then
        fail('requires.effects.%s must be a version range such as "^1.2", got %s', name, show(range))
      end
      lines[#lines + 1] = name .. " " .. range
    end
    sort(lines)
    info.requires.effects = concat(lines, "\n")
  end
  local apply = rawget(definition, "apply")
  if apply ~= nil and type(apply) ~= "function" then fail("apply must be a function, got %s", show(apply)) end
  info.hasApply = apply ~= nil
  local parameters = rawget(definition, "parameters")
  info.declaresParameters = parameters ~= nil
  if parameters ~= nil and type(parameters) ~= "table" then fail("parameters must be a list of tables, got %s", show(parameters)) end
  local index = 1
  while parameters and rawget(parameters, index) ~= nil do
    local spec = rawget(parameters, index)
    if type(spec) ~= "table" then fail("parameter %d must be a table, got %s", index, show(spec)) end
    local name = rawget(spec, "name")
    if type(name) ~= "string" or not match(name, "^[%a_][%w_]*$") then
      fail("parameter %d needs a name that is an identifier, got %s", index, show(name))
    end
    if info.byName[name] then fail("parameter %s is declared twice", name) end
    local parameter = {
      name = name, type = rawget(spec, "type") or "any", min = rawget(spec, "min"), max = rawget(spec, "max"),
      default = rawget(spec, "default"), doc = text("doc", spec, "doc of parameter " .. name),
      required = rawget(spec, "required") == true, allowEmpty = rawget(spec, "allowEmpty") == true,
    }
    local choices = rawget(spec, "choices")
    if choices ~= nil then
      if parameter.type ~= "string" or type(choices) ~= "table" then
        fail("choices of parameter %s must be a list of strings, for a parameter of type string", name)
      end
      parameter.choices = {}
      local count = 0
      for _ in next, choices do count = count + 1 end
      for i = 1, count do
        local choice = rawget(choices, i)
        if type(choice) ~= "string" then fail("choices of parameter %s must be a list of strings, got %s", name, show(choice)) end
        parameter.choices[i] = choice
      end
      if count == 0 then fail("choices of parameter %s is empty", name) end
    end
    if type(parameter.type) ~= "string" or typePhrases[parameter.type] == nil then
      fail("parameter %s has type %s; use %s", name, show(parameter.type), typeList)
    end
    for _, bound in next, { "min", "max" } do
      local value = parameter[bound]
      if value ~= nil and (type(value) ~= "number" or value ~= value) then
        fail("%s of parameter %s must be a number, got %s", bound, name, show(value))
      end
      if value ~= nil and parameter.type ~= "number" and parameter.type ~= "integer" and parameter.type ~= "point" and parameter.type ~= "size" then
        fail("parameter %s has a %s, but only numbers, points and sizes have ranges", name, bound)
      end
    end
    if parameter.default ~= nil and not check(parameter, parameter.default) then
      fail("default of parameter %s must be %s, got %s", name, expectation(parameter), show(parameter.default))
    end
    info.parameters[index] = parameter
    info.byName[name] = parameter
    index = index + 1
  end
  -- A dictionary ({ size = {…} }) would otherwise read as an effect that takes no parameters.
  for key in next, parameters or {} do
    if mathType(key) ~= "integer" or key < 1 or key >= index then
      fail("parameters must be a list { { name = ... }, ... }, got a table with the key %s", show(key))
    end
  end
  if info.fields.kind == "transition" then
    for _, given in next, transitionParameters do
      if not info.byName[given.name] then
        info.parameters[index] = copy(given)
        info.byName[given.name] = info.parameters[index]
        index = index + 1
      end
    end
  end
  return info, apply
end

local function description(info)
  local parameters = {}
  for i, p in next, info.parameters do
    parameters[i] = {
      name = p.name, type = p.type, min = p.min, max = p.max, doc = p.doc, required = p.required,
      default = p.default ~= nil and show(p.default) or nil,
      choices = p.choices and concat(p.choices, "\n") or nil,
    }
  end
  local result = copy(info.fields)
  result.module, result.location, result.parameters = info.module, info.location, parameters
  result.requiresMoonreel, result.requiresEffects = info.requires.moonreel, info.requires.effects
  return result
end

-- Wrapping an effect for its caller -----------------------------------------------------

-- `info` is the effect's checked metadata; `applyInEffect` and `fieldOfEffect` run in the
-- effect's own state, under its limits.
local observeEffectCall = host.observeEffectCall

local function wrap(module, info, applyInEffect, fieldOfEffect)
  local wrapper = {}
  local function invoke(options, ...)
    if not info.hasApply then raise(format('effect "%s" has no apply function', module)) end
    -- A previewing host sees the call and may change its options (the studio's controls).
    if observeEffectCall then options = observeEffectCall(module, options, info.parameters) end
    return applyInEffect(validate(info, options), ...)
  end
  local function apply(first, ...)   -- lyrics.apply(opts, ...) and lyrics:apply(opts, ...)
    if rawequal(first, wrapper) then return invoke(...) end
    return invoke(first, ...)
  end
  setmetatable(wrapper, {
    __call = function(_, ...) return invoke(...) end,
    __index = function(_, key)
      if key == "apply" then return apply end
      if key == "parameters" then
        local list = {}
        for i, parameter in next, info.parameters do list[i] = copy(parameter) end
        return list
      end
      local field = info.fields[key]
      if field ~= nil then return field end
      -- Other fields (helpers of a library effect) are shared too: tables as read-only copies.
      field = fieldOfEffect(key)
      if type(field) == "table" then return C.readonly(field, nil, module .. "." .. tostring(key)) end
      return field
    end,
    __newindex = function() raise(format('effect "%s" is read-only', module)) end,
    __tostring = function() return format('effect "%s" %s', module, info.fields.version) end,
    __metatable = false,
  })
  return wrapper
end

local function requireEffect(module)
  return wrap(module, openEffect(module))
end

-- A script's own parameters (av.parameters): declared and checked as an effect's are;
-- the values come from the host (--set NAME=VALUE, the studio's controls).
local givenParameters = host.givenParameters
local declared = false
local function scriptParameters(spec)
  if declared then raise("av.parameters: a script declares its parameters once") end
  declared = true
  if type(spec) ~= "table" then raise(format("av.parameters: expected a list { { name = ... }, ... }, got %s", show(spec))) end
  local info = describe("script", { parameters = spec }, "script", "av.parameters")
  return validate(info, givenParameters(info.parameters), "script parameters (--set NAME=VALUE)")
end

if host.role == "script" then
  -- First in package.searchers: "effects.NAME" always ends here (found, or an error naming
  -- the places searched), so no later searcher can load an effect as trusted code.
  local function searcher(name)
    local global = host.modules[name]
    if global then
      local value = rawget(globals, global)
      if value == nil then return "no " .. global .. " module registered" end
      return function() return value end, ":" .. name .. ":"
    end
    if type(name) ~= "string" or sub(name, 1, 8) ~= "effects." then return nil end
    return function() return requireEffect(sub(name, 9)) end, name
  end
  table.insert(package.searchers, 1, searcher)
  return { parameters = scriptParameters }
end

-- An effect's own state ------------------------------------------------------------------

-- The globals are the sandbox (see moon_open_effect_libraries); tables the host installed
-- (such as av) become read-only views of the fields allowed.
math.randomseed(host.randomSeed)
for name, fields in next, host.allowedGlobals do
  local real = rawget(globals, name)
  if type(real) == "table" then globals[name] = C.readonly(real, fields, name) end
end
-- What is missing on purpose says why, rather than "attempt to index a nil value".
local unavailable = {
  io = "effects cannot touch files", os = "effects cannot run programs or read the environment",
  debug = "effects cannot inspect or change the host", package = 'effects load effects with require "effects.NAME"',
  load = "effects cannot load code", loadfile = "effects cannot load code", dofile = "effects cannot load code",
  loadstring = "effects cannot load code",
}
setmetatable(globals, {
  __index = function(_, name)
    local why = unavailable[name]
    if why then raise(format("%s is not available to effects: %s", name, why)) end
  end,
  __metatable = false,
})
-- What an effect knows of itself: effect.asset("grain.png") is the path of a file it ships
-- (an effect that is a folder: NAME/init.lua and its files), for av.image and LUT filters;
-- effect.warn(message [, remedy]) and effect.note(…) put what it did other than asked in the
-- run's report, at the script line that called it.
globals.effect = { asset = host.asset, warn = host.warn, note = host.note }
local modules, requirable = {}, {'"effects.NAME"'}
for name, global in next, host.modules do
  modules[name] = rawget(globals, global) or false
  requirable[#requirable + 1] = format("%q", name)
end
table.sort(requirable)
requirable = table.concat(requirable, " and ")
local loaded = {}
globals.require = function(module)
  local value = modules[module]
  if value == false then
    raise(format("module '%s' not found: the %s API is not available to effects", module, host.modules[module]))
  elseif value ~= nil then
    return value
  end
  if type(module) ~= "string" or sub(module, 1, 8) ~= "effects." then
    raise(format("effects can only require %s, not %s", requirable, show(module)))
  end
  local wrapper = loaded[module]
  if wrapper == nil then
    wrapper = requireEffect(sub(module, 9))
    loaded[module] = wrapper
  end
  return wrapper
end

local definition, info, applyFunction
return {
  -- Runs the effect's chunk and checks what it returns; the metadata goes to the caller.
  load = function(source, chunkName, module, location)
    local chunk, message = C.loadText(source, chunkName, globals)
    if not chunk then error(message, 0) end
    definition = chunk("effects." .. module)
    if type(definition) ~= "table" then
      raise(format('effect "%s" must return a table, got %s', module, show(definition)))
    end
    info, applyFunction = describe(module, definition, location)
    return info
  end,
  apply = function(params, ...) return applyFunction(params, ...) end,
  field = function(key) return rawget(definition, key) end,
  description = function() return description(info) end,
}
