package handler

import "salon/shared/instance"

// The settings each function uses, in the sense that matters when one is bad:
// a bad setting on its function's list stops that function (INTERNAL; the log
// names the setting), while a bad setting off the list is logged as a warning
// and left at its default. Good settings are read by every function either way.
// So a short SESSION_SECRET stops login, reserve and cancel but never payment
// notifications or the release run; those two list only what they cannot work
// without (the store and WeChat Pay), and a typo in SHOP_TZ, CLS_*, a policy
// duration or SHOP_NAME leaves them running on the default, warning each time
// they start. Every name here must also be passed to its function by
// serverless.yml (TestFunctionSettingsDeclared). A policy setting (such as
// CANCEL_FREE_HOURS or NO_SHOW_LIMIT) joins the list of the functions that
// apply it when they start to.
var (
	// storeSettings configure the store: every function that touches the database.
	storeSettings = []string{"MYSQL_DSN", "LOCK_TTL", "BOOKING_WINDOW_DAYS"}
	// weChatPaySettings build the WeChat Pay client: orders, refunds, notifications.
	weChatPaySettings = []string{"WX_APPID", "WECHATPAY_MCHID", "WECHATPAY_MCH_CERT_SERIAL", "WECHATPAY_MCH_PRIVATE_KEY",
		"WECHATPAY_APIV3_KEY", "WECHATPAY_PUBLIC_KEY_ID", "WECHATPAY_PUBLIC_KEY", "WECHATPAY_API_BASE",
		"WECHATPAY_NOTIFY_URL", "WECHATPAY_REFUND_NOTIFY_URL"}
)

var (
	slotsFunction = instance.Function{Name: "slots", Settings: joinSettings(storeSettings, settingList("SHOP_TZ"))}
	// login requires what it checks before every login (LoginRouter).
	loginFunction = instance.Function{Name: "login", Settings: settingList("SHOP_TZ", "SESSION_SECRET", "WX_APPID", "WX_APPSECRET", "WX_API_BASE"),
		Required: settingList("SESSION_SECRET", "WX_APPID", "WX_APPSECRET")}
	// The customer routes require SESSION_SECRET to verify a token (customerOf);
	// the admin function's console requires it to sign its sessions.
	reserveFunction = instance.Function{Name: "reserve", Settings: joinSettings(storeSettings, weChatPaySettings,
		settingList("SHOP_TZ", "SESSION_SECRET", "NO_SHOW_LIMIT", "CANCEL_FREE_HOURS")), Required: settingList("SESSION_SECRET")}
	// NO_SHOW_LIMIT is also the rule of every waitlist offer, made wherever a
	// seat comes free: a cancel, the salon's changes, an expiry in the release run.
	cancelFunction = instance.Function{Name: "cancel", Settings: joinSettings(storeSettings, weChatPaySettings,
		settingList("SHOP_TZ", "SESSION_SECRET", "CANCEL_FREE_HOURS", "NO_SHOW_LIMIT")), Required: settingList("SESSION_SECRET")}
	adminFunction = instance.Function{Name: "admin", Settings: joinSettings(storeSettings, weChatPaySettings,
		settingList("SHOP_TZ", "ADMIN_TOKEN", "CANCEL_FREE_HOURS", "SHOP_NAME", "NO_SHOW_LIMIT", "CHECKIN_OPENS_BEFORE")),
		Required: settingList("SESSION_SECRET")}
	payNotifyFunction = instance.Function{Name: "paynotify", Settings: joinSettings(storeSettings, weChatPaySettings)}
	releaseFunction   = instance.Function{Name: "release", Settings: joinSettings(storeSettings, weChatPaySettings, settingList("NO_SHOW_LIMIT"))}
)

// Functions are the product's functions and the settings each uses, by name.
var Functions = []instance.Function{slotsFunction, loginFunction, reserveFunction, cancelFunction,
	payNotifyFunction, adminFunction, releaseFunction}

func settingList(names ...string) []string { return names }

// joinSettings joins lists of settings into a new one.
func joinSettings(lists ...[]string) []string {
	var all []string
	for _, l := range lists {
		all = append(all, l...)
	}
	return all
}
