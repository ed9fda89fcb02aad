package logstore

import (
	"github.com/partfs/partfs/internaltopic"
	"github.com/partfs/partfs/record"
)

// metadataTopic is KRaft's metadata log. A broker's raft layer owns it,
// not its log manager: partfs reads it (its records give the topics'
// configuration), never writes it, and leaves it out of the root
// checkpoint files as Kafka does.
const metadataTopic = internaltopic.ClusterMetadataName

// brokerConfigs folds the metadata log's records into each topic's
// configuration (the latest ConfigRecords; nil when there is no metadata
// log). The log is read as a consumer reads it.
func (st *Store) brokerConfigs(t *topic) map[string]map[string]string {
	if t == nil || len(t.logs) == 0 || t.logs[0] == nil {
		return nil
	}
	l := t.logs[0]
	var c internaltopic.Configs
	snap, release := l.Segments()
	defer release()
	for _, sg := range snap {
		err := l.Read(sg, sg.Base, func(r *record.Record) bool {
			c.Apply(r.Value)
			return true
		})
		if err != nil {
			st.logger.WithError(err).WithField("segment", sg.Base).
				Warn("reading topic configurations from the metadata log stopped early")
			break
		}
	}
	out := map[string]map[string]string{}
	for _, name := range c.Topics() {
		out[name] = c.Topic(name)
	}
	return out
}
