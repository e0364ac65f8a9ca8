package handler

import (
	"salon/shared/config"
	"salon/shared/instance"
)

// The product's functions and the settings each uses and requires. Which
// function uses which setting is written once, in package config's table of
// settings (config.FunctionSettings says why it matters: a bad setting on a
// function's list stops it, one off the list is a warning). Every name a
// function uses must also be passed to it by serverless.yml
// (TestFunctionSettingsDeclared).
var (
	slotsFunction     = function(config.FunctionSlots)
	loginFunction     = function(config.FunctionLogin)
	reserveFunction   = function(config.FunctionReserve)
	cancelFunction    = function(config.FunctionCancel)
	payNotifyFunction = function(config.FunctionPayNotify)
	adminFunction     = function(config.FunctionAdmin)
	releaseFunction   = function(config.FunctionRelease)
)

// Functions are the product's functions and the settings each uses, by name.
var Functions = []instance.Function{slotsFunction, loginFunction, reserveFunction, cancelFunction,
	payNotifyFunction, adminFunction, releaseFunction}

// function is the named function with its settings from package config.
func function(name string) instance.Function {
	uses, requires := config.FunctionSettings(name)
	return instance.Function{Name: name, Settings: uses, Required: requires}
}
