package discordtest

import (
	"bytes"
	"encoding/json"
	"fmt"
	"regexp"
	"sort"
	"strings"
)

// The bodies Discord's REST API takes, field by field, as discord-api-types
// 0.38 describes them (rest/v10/channel.ts, rest/v10/webhook.ts,
// rest/v10/interactions.ts, payloads/v10/message.ts and
// payloads/v10/_interactions/responses.ts). The fake refuses a body
// with a field its type does not have, a null where the field is not
// nullable (an optional field is left out, never null, unless the type
// says "| null"), a value of the wrong JSON type, or a required field
// missing, as 400 Invalid Form Body (50035), naming the path. Discord
// itself ignores some unknown fields and takes some nulls; the fake is
// stricter on purpose, so a test proves the bot sends exactly the
// documented fields.

// kind is a JSON value's expected type.
type kind int

const (
	kString kind = iota + 1
	kInt
	kBool
	kSnowflake // a string of digits
	kObject
	kArray
	kStringOrInt
	kFreeObject // an object whose keys are data (localizations)
	kComponent  // an object whose "type" picks its shape
)

type shape struct {
	kind   kind
	fields map[string]field // kObject
	elem   *shape           // kArray
	// union picks a component's shape by its "type" (kComponent), with
	// the words for a type it does not take.
	union map[int]*shape
	what  string
}

type field struct {
	s        *shape
	nullable bool
	required bool
}

func obj(fields map[string]field) *shape { return &shape{kind: kObject, fields: fields} }
func arr(elem *shape) *shape             { return &shape{kind: kArray, elem: elem} }
func opt(s *shape) field                 { return field{s: s} }
func null(s *shape) field                { return field{s: s, nullable: true} }
func req(s *shape) field                 { return field{s: s, required: true} }
func union(what string, m map[int]*shape) *shape {
	return &shape{kind: kComponent, union: m, what: what}
}

var (
	tString     = &shape{kind: kString}
	tInt        = &shape{kind: kInt}
	tBool       = &shape{kind: kBool}
	tSnowflake  = &shape{kind: kSnowflake}
	tStringInt  = &shape{kind: kStringOrInt}
	tFreeObject = &shape{kind: kFreeObject}
)

// withFields is s's fields and more.
func withFields(base map[string]field, more map[string]field) map[string]field {
	out := map[string]field{}
	for k, v := range base {
		out[k] = v
	}
	for k, v := range more {
		out[k] = v
	}
	return out
}

var (
	// APIEmbed and its parts.
	embedShape = obj(map[string]field{
		"title": opt(tString), "type": opt(tString), "description": opt(tString), "url": opt(tString),
		"timestamp": opt(tString), "color": opt(tInt),
		"footer": opt(obj(map[string]field{"text": req(tString), "icon_url": opt(tString), "proxy_icon_url": opt(tString)})),
		"image":  opt(media), "thumbnail": opt(media), "video": opt(media),
		"provider": opt(obj(map[string]field{"name": opt(tString), "url": opt(tString)})),
		"author":   opt(obj(map[string]field{"name": req(tString), "url": opt(tString), "icon_url": opt(tString), "proxy_icon_url": opt(tString)})),
		"fields":   opt(arr(obj(map[string]field{"name": req(tString), "value": req(tString), "inline": opt(tBool)}))),
	})
	media = obj(map[string]field{"url": opt(tString), "proxy_url": opt(tString), "height": opt(tInt), "width": opt(tInt)})

	// APIAllowedMentions.
	mentionsShape = obj(map[string]field{"parse": opt(arr(tString)), "roles": opt(arr(tSnowflake)),
		"users": opt(arr(tSnowflake)), "replied_user": opt(tBool)})

	emojiShape = obj(map[string]field{"id": opt(tSnowflake), "name": opt(tString), "animated": opt(tBool)})

	// A message's button (APIButtonComponent).
	buttonShape = obj(map[string]field{"type": req(tInt), "id": opt(tInt), "style": req(tInt), "label": opt(tString),
		"emoji": opt(emojiShape), "custom_id": opt(tString), "url": opt(tString), "sku_id": opt(tSnowflake), "disabled": opt(tBool)})
	// A message's string select (APIStringSelectComponent): "required"
	// is a modal's field only.
	messageSelectShape = obj(func() map[string]field {
		m := withFields(stringSelectFields, nil)
		delete(m, "required")
		return m
	}())
	// A message's top-level components: action rows of buttons or of one
	// string select. (The fake knows no components v2: the bot sends
	// none.)
	messageComponents = arr(union("a message's top-level component", map[int]*shape{
		1: obj(map[string]field{"type": req(tInt), "id": opt(tInt),
			"components": req(arr(union("an action row's component", map[int]*shape{2: buttonShape, 3: messageSelectShape})))}),
	}))

	// A text input: in a label it takes no label of its own.
	textInputFields = map[string]field{"type": req(tInt), "id": opt(tInt), "style": req(tInt), "custom_id": req(tString),
		"placeholder": opt(tString), "value": opt(tString), "min_length": opt(tInt), "max_length": opt(tInt), "required": opt(tBool)}
	// A modal's components (APIModalInteractionResponseCallbackComponent):
	// labels and text displays. Action rows in modals are deprecated,
	// and refused here.
	modalComponents = arr(union("a modal's component (action rows in modals are deprecated: use a label)", map[int]*shape{
		10: obj(map[string]field{"type": req(tInt), "id": opt(tInt), "content": req(tString)}),
		18: obj(map[string]field{"type": req(tInt), "id": opt(tInt), "label": req(tString), "description": opt(tString),
			"component": req(union("a label's component", map[int]*shape{4: obj(textInputFields), 3: obj(stringSelectFields)}))}),
	}))

	// A string select in a modal's label (APIStringSelectComponent).
	stringSelectFields = map[string]field{"type": req(tInt), "id": opt(tInt), "custom_id": req(tString),
		"options": req(arr(obj(map[string]field{"label": req(tString), "value": req(tString), "description": opt(tString),
			"emoji": opt(emojiShape), "default": opt(tBool)}))),
		"placeholder": opt(tString), "min_values": opt(tInt), "max_values": opt(tInt), "required": opt(tBool), "disabled": opt(tBool)}

	// RESTPostAPIChannelMessageJSONBody.
	bodyMessageCreate = obj(map[string]field{
		"content": opt(tString), "nonce": opt(tStringInt), "tts": opt(tBool), "embeds": opt(arr(embedShape)),
		"allowed_mentions": opt(mentionsShape), "message_reference": opt(obj(map[string]field{"type": opt(tInt),
			"message_id": opt(tSnowflake), "channel_id": opt(tSnowflake), "guild_id": opt(tSnowflake), "fail_if_not_exists": opt(tBool)})),
		"components": opt(messageComponents), "sticker_ids": opt(arr(tSnowflake)), "attachments": opt(arr(tFreeObject)),
		"flags": opt(tInt), "enforce_nonce": opt(tBool), "poll": opt(tFreeObject), "shared_client_theme": opt(tFreeObject),
	})
	// RESTPatchAPIChannelMessageJSONBody.
	bodyMessageEdit = obj(map[string]field{
		"content": null(tString), "embeds": null(arr(embedShape)), "flags": null(tInt), "allowed_mentions": null(mentionsShape),
		"attachments": opt(arr(tFreeObject)), "components": null(messageComponents),
	})
	// RESTPostAPIWebhookWithTokenJSONBody: an interaction's follow-up.
	webhookFields = map[string]field{
		"content": opt(tString), "username": opt(tString), "avatar_url": opt(tString), "tts": opt(tBool),
		"embeds": opt(arr(embedShape)), "allowed_mentions": opt(mentionsShape), "components": opt(messageComponents),
		"attachments": opt(arr(tFreeObject)), "flags": opt(tInt), "thread_name": opt(tString), "applied_tags": opt(arr(tSnowflake)),
		"poll": opt(tFreeObject),
	}
	bodyFollowup = obj(webhookFields)
	// RESTPatchAPIWebhookWithTokenMessageJSONBody: @original.
	bodyOriginalEdit = obj(map[string]field{
		"content": null(tString), "embeds": null(arr(embedShape)), "allowed_mentions": null(mentionsShape),
		"components": null(messageComponents), "attachments": opt(arr(tFreeObject)), "poll": opt(tFreeObject),
	})
	// APIInteractionResponseCallbackData: the webhook body without its
	// username and avatar_url.
	callbackData = obj(func() map[string]field {
		m := withFields(webhookFields, nil)
		delete(m, "username")
		delete(m, "avatar_url")
		return m
	}())
	bodyModal = obj(map[string]field{"custom_id": req(tString), "title": req(tString), "components": req(modalComponents)})

	// RESTPostAPIChannelMessagesThreadsJSONBody.
	bodyThreadStart = obj(map[string]field{"name": req(tString), "auto_archive_duration": opt(tInt), "rate_limit_per_user": opt(tInt)})
	// RESTPostAPICurrentUserCreateDMChannelJSONBody.
	bodyDMCreate = obj(map[string]field{"recipient_id": req(tSnowflake)})

	// RESTPutAPIApplicationCommandsJSONBody: chat input commands and
	// their subcommand options.
	commandOptionShape = func() *shape {
		s := obj(nil)
		s.fields = map[string]field{"type": req(tInt), "name": req(tString), "name_localizations": null(tFreeObject),
			"description": req(tString), "description_localizations": null(tFreeObject), "required": opt(tBool),
			"options": opt(arr(s))}
		return s
	}()
	bodyCommands = arr(obj(map[string]field{
		"name": req(tString), "name_localizations": null(tFreeObject), "description": opt(tString),
		"description_localizations": null(tFreeObject), "options": opt(arr(commandOptionShape)),
		"default_member_permissions": null(tString), "dm_permission": null(tBool), "default_permission": null(tBool),
		"nsfw": opt(tBool), "integration_types": opt(arr(tInt)), "contexts": opt(arr(tInt)), "type": opt(tInt), "handler": opt(tInt),
	}))
)

// responseData is the data each interaction response type takes; nil
// means it takes none.
var responseData = map[int]*shape{
	1: nil,
	4: callbackData,
	5: obj(map[string]field{"flags": opt(tInt)}),
	6: nil,
	7: callbackData,
	8: obj(map[string]field{"choices": opt(arr(tFreeObject))}),
	9: bodyModal,
}

var digits = regexp.MustCompile(`^[0-9]{1,20}$`)

// checkBody reads raw as JSON and checks it against s, naming the first
// problem; "" when it conforms.
func checkBody(raw []byte, s *shape) string {
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return "the body is not JSON"
	}
	return check("", v, s)
}

// checkResponseBody checks an interaction response: its type, and the
// data that type takes, or none.
func checkResponseBody(raw []byte) string {
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	var v map[string]any
	if err := dec.Decode(&v); err != nil {
		return "the answer is not a JSON object"
	}
	for k := range v {
		if k != "type" && k != "data" {
			return fmt.Sprintf("%s: not a field of an interaction response", k)
		}
	}
	n, ok := v["type"].(json.Number)
	t, err := n.Int64()
	if !ok || err != nil {
		return "type: want an integer"
	}
	data, known := responseData[int(t)]
	if !known {
		return fmt.Sprintf("type: %d is not a response type the bot may send", t)
	}
	d, has := v["data"]
	switch {
	case has && d == nil:
		return "data: null (leave it out)"
	case has && data == nil:
		return fmt.Sprintf("data: response type %d takes none", t)
	case has:
		return check("data", d, data)
	case t == 4 || t == 8 || t == 9:
		return "data: required"
	}
	return ""
}

func join(path, key string) string {
	if path == "" {
		return key
	}
	return path + "." + key
}

func check(path string, v any, s *shape) string {
	where := path
	if where == "" {
		where = "(the body)"
	}
	if v == nil {
		return where + ": null"
	}
	switch s.kind {
	case kString:
		if _, ok := v.(string); !ok {
			return where + ": want a string"
		}
	case kSnowflake:
		if str, ok := v.(string); !ok || !digits.MatchString(str) {
			return where + ": want a snowflake (a string of digits)"
		}
	case kInt:
		n, ok := v.(json.Number)
		if _, err := n.Int64(); !ok || err != nil {
			return where + ": want an integer"
		}
	case kStringOrInt:
		if _, ok := v.(string); ok {
			return ""
		}
		if n, ok := v.(json.Number); !ok || n.String() == "" {
			return where + ": want a string or an integer"
		}
	case kBool:
		if _, ok := v.(bool); !ok {
			return where + ": want a boolean"
		}
	case kFreeObject:
		if _, ok := v.(map[string]any); !ok {
			return where + ": want an object"
		}
	case kArray:
		a, ok := v.([]any)
		if !ok {
			return where + ": want an array"
		}
		for i, e := range a {
			if p := check(fmt.Sprintf("%s[%d]", path, i), e, s.elem); p != "" {
				return p
			}
		}
	case kComponent:
		m, ok := v.(map[string]any)
		if !ok {
			return where + ": want a component object"
		}
		n, _ := m["type"].(json.Number)
		t, err := n.Int64()
		if err != nil {
			return where + ".type: want an integer"
		}
		sub, ok := s.union[int(t)]
		if !ok {
			return fmt.Sprintf("%s: a component of type %d is not %s", where, t, s.what)
		}
		return check(path, v, sub)
	case kObject:
		m, ok := v.(map[string]any)
		if !ok {
			return where + ": want an object"
		}
		keys := make([]string, 0, len(m))
		for k := range m {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		for _, k := range keys {
			f, ok := s.fields[k]
			if !ok {
				return join(path, k) + ": not a field of this object (" + strings.Join(fieldNames(s), ", ") + ")"
			}
			if m[k] == nil {
				if !f.nullable {
					return join(path, k) + ": null where the field is to be left out"
				}
				continue
			}
			if p := check(join(path, k), m[k], f.s); p != "" {
				return p
			}
		}
		for k, f := range s.fields {
			if _, ok := m[k]; f.required && !ok {
				return join(path, k) + ": required"
			}
		}
	}
	return ""
}

func fieldNames(s *shape) []string {
	out := make([]string, 0, len(s.fields))
	for k := range s.fields {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

// CheckMessageCreate, CheckMessageEdit, CheckFollowup, CheckOriginalEdit
// and CheckResponse check a body the bot sends against what Discord's API
// takes for it ("" when it conforms), as the fake's routes do: for tests
// that check a rendering without sending it.
func CheckMessageCreate(raw []byte) string { return checkBody(raw, bodyMessageCreate) }
func CheckMessageEdit(raw []byte) string   { return checkBody(raw, bodyMessageEdit) }
func CheckFollowup(raw []byte) string      { return checkBody(raw, bodyFollowup) }
func CheckOriginalEdit(raw []byte) string  { return checkBody(raw, bodyOriginalEdit) }
func CheckResponse(raw []byte) string      { return checkResponseBody(raw) }

// CheckThreadStart and CheckCommands check the body of a thread's start
// from a message and of the bulk registration of global commands.
func CheckThreadStart(raw []byte) string { return checkBody(raw, bodyThreadStart) }
func CheckCommands(raw []byte) string    { return checkBody(raw, bodyCommands) }
