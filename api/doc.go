// Package api holds the contract between the bot and a job backend in a
// form other tools read: openapi.yaml (OpenAPI 3.1, both directions of
// docs/protocol.md) and the JSON Schemas (draft 2020-12) under schema/ it
// references. Its tests prove the contract against the code both ways:
// what the contract accepts, the bot's parser accepts, and every body the
// bot sends or answers is one the contract describes (docs/contract.md).
package api
