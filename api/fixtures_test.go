package api_test

import (
	"testing"
	"time"

	"approvalsbot/approval"
)

// TestSchemasCompile: every schema file is draft 2020-12 that a standard
// validator compiles, its references resolved across files.
func TestSchemasCompile(t *testing.T) {
	t.Parallel()
	for name := range schemaTexts(t) {
		compile(t, name)
	}
}

// TestFixtureEventsValidate: every example event the bot's tests send is
// one the schema accepts and the bot's parser accepts.
func TestFixtureEventsValidate(t *testing.T) {
	t.Parallel()
	ev := compile(t, eventSchema)
	now := time.Now()
	for name, body := range fixtureEvents(t) {
		for _, b := range [][]byte{body, moveToNow(t, body, now)} {
			if err := validate(ev, b); err != nil {
				t.Errorf("%s: the schema refuses it: %v", name, err)
			}
			if _, err := approval.Parse(b); err != nil {
				t.Errorf("%s: the parser refuses it: %v", name, err)
			}
		}
	}
}
