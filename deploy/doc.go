// Package deploy holds what runs the bot as a service, beside the code it
// runs: the systemd unit (systemd/), the Prometheus alerts and their tests
// (prometheus/), the Grafana dashboard (grafana/) and the Slack app
// manifests. It has no code of its own; its tests keep these files true
// to the bot: every metric they name is one the bot exports, and every
// query of the dashboard is checked by promtool through a rules file
// generated from it (go test ./deploy -update writes it again).
package deploy
