package internaltopic

// Configs is the topic configuration that the records of
// __cluster_metadata describe, folded in offset order: the latest
// ConfigRecord of each topic and key (a null value deletes the key), and a
// RemoveTopicRecord deleting the topic's keys.
type Configs struct {
	names  map[UUID]string
	topics map[string]map[string]string
}

// configResourceTopic is ConfigResource.Type TOPIC.
const configResourceTopic = 2

// Apply folds one record value of __cluster_metadata in; records that do
// not decode change nothing.
func (c *Configs) Apply(value []byte) {
	d, err := decodeMetadata(value)
	if err != nil {
		return
	}
	o := d.Value.(Object)
	switch d.Type {
	case "TopicRecord":
		name, _ := o.Get("name").(string)
		id, _ := o.Get("topicId").(UUID)
		if c.names == nil {
			c.names = map[UUID]string{}
		}
		c.names[id] = name
	case "RemoveTopicRecord":
		id, _ := o.Get("topicId").(UUID)
		if name, ok := c.names[id]; ok {
			delete(c.topics, name)
			delete(c.names, id)
		}
	case "ConfigRecord":
		if t, _ := o.Get("resourceType").(int8); t != configResourceTopic {
			return
		}
		topic, _ := o.Get("resourceName").(string)
		name, _ := o.Get("name").(string)
		value, set := o.Get("value").(string)
		c.set(topic, name, value, set)
	}
}

func (c *Configs) set(topic, name, value string, set bool) {
	if !set {
		delete(c.topics[topic], name)
		return
	}
	if c.topics == nil {
		c.topics = map[string]map[string]string{}
	}
	if c.topics[topic] == nil {
		c.topics[topic] = map[string]string{}
	}
	c.topics[topic][name] = value
}

// Topic returns the keys set for topic (nil if none); the caller must not
// change the map.
func (c *Configs) Topic(topic string) map[string]string { return c.topics[topic] }

// Topics returns the topics with at least one key set.
func (c *Configs) Topics() []string {
	out := make([]string, 0, len(c.topics))
	for t, kv := range c.topics {
		if len(kv) > 0 {
			out = append(out, t)
		}
	}
	return out
}
