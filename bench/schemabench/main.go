// Command schemabench measures `cat log.jsonl` of Avro records in the
// Schema Registry wire format through a mount of a Kafka cluster (schemas
// from a registry stand-in, cached by ID) against two baselines in the
// same run: a Go consumer loop with franz-go, pkg/sr's Serde and the same
// Avro library (hamba/avro) with encoding/json output, and `cat
// log.jsonl` of the same records stored as plain JSON text.
// bench/schema.sh builds partfs and runs it; it needs root and /dev/fuse.
package main

import (
	"bufio"
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/hamba/avro/v2"
	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/sr"
	"github.com/twmb/franz-go/pkg/sr/srfake"

	bu "github.com/partfs/partfs/bench/internal/benchutil"
)

var (
	records = flag.Int("records", 1000000, "records per topic")
	profile = flag.String("cpuprofile", "", "write the CPU profile of the first round's daemon to this file")
)

const orderSchema = `{"type":"record","name":"Order","namespace":"bench","fields":[
 {"name":"id","type":"long"},
 {"name":"customer","type":"string"},
 {"name":"item","type":"string"},
 {"name":"qty","type":"int"},
 {"name":"price","type":"double"},
 {"name":"note","type":["null","string"],"default":null},
 {"name":"tags","type":{"type":"array","items":"string"}},
 {"name":"ts","type":"long"}
]}`

type order struct {
	ID       int64    `avro:"id" json:"id"`
	Customer string   `avro:"customer" json:"customer"`
	Item     string   `avro:"item" json:"item"`
	Qty      int32    `avro:"qty" json:"qty"`
	Price    float64  `avro:"price" json:"price"`
	Note     *string  `avro:"note" json:"note"`
	Tags     []string `avro:"tags" json:"tags"`
	TS       int64    `avro:"ts" json:"ts"`
}

func main() {
	flag.Parse()
	dir, cleanup := bu.WorkDir("schemabench")
	defer cleanup()
	c, err := kfake.NewCluster(kfake.NumBrokers(1), kfake.SeedTopics(1, "avro", "json"))
	if err != nil {
		bu.Die(err)
	}
	defer c.Close()
	addr := strings.Join(c.ListenAddrs(), ",")
	reg := srfake.New()
	srv := httptest.NewServer(reg.Handler())
	defer srv.Close()
	id, _, err := reg.RegisterSchema("avro-value", sr.Schema{Schema: orderSchema})
	if err != nil {
		bu.Die(err)
	}
	avroBytes, jsonBytes := produce(addr, id)
	fmt.Printf("input: %d records per topic, Avro values %.0f MB, JSON text values %.0f MB; cluster %s (kfake, in process)\n",
		*records, float64(avroBytes)/1e6, float64(jsonBytes)/1e6, addr)

	var rate [3][]float64
	var ratioLoop, ratioText []float64
	for i := 1; i <= bu.Rounds(); i++ {
		mnt := filepath.Join(dir, fmt.Sprint("mnt", i))
		args := []string{*bu.PartfsBin, "mount", "--log-level", "warn", "--kafka", addr,
			"--cache-dir", filepath.Join(dir, fmt.Sprint("cache", i)), "--schema-registry", srv.URL}
		if *profile != "" && i == 1 {
			args = append(args, "--cpuprofile", *profile)
		}
		d := bu.Mount(mnt, append(args, mnt)...)
		loop := consumerLoop(addr, srv.URL)
		// the mount's first look at each topic (metadata, connections)
		// is not what is measured
		bu.Sh(fmt.Sprintf("head -c 1 %s/avro/0/log.jsonl %s/json/0/log.jsonl > /dev/null", mnt, mnt))
		avroCat, avroCPU := catCPU(d, mnt+"/avro/0/log.jsonl")
		textCat, textCPU := catCPU(d, mnt+"/json/0/log.jsonl")
		check(mnt)
		d.Stop()
		n := float64(*records)
		r := [3]float64{n / loop.Seconds(), n / avroCat.Seconds(), n / textCat.Seconds()}
		for k := range r {
			rate[k] = append(rate[k], r[k])
		}
		ratioLoop, ratioText = append(ratioLoop, r[1]/r[0]), append(ratioText, r[1]/r[2])
		fmt.Printf("round %d: consumer loop %.0f, cat log.jsonl (Avro) %.0f, cat log.jsonl (JSON text) %.0f records/s: %.2fx the loop, %.2fx the text\n",
			i, r[0], r[1], r[2], r[1]/r[0], r[1]/r[2])
		fmt.Printf("  processor time of the cats (daemon + this process, which serves the cluster): Avro %s, JSON text %s\n", avroCPU, textCPU)
	}
	load, _ := os.ReadFile("/proc/loadavg")
	fmt.Printf("medians of %d rounds (ratio: median of the rounds' ratios); loadavg %s", len(ratioLoop), load)
	fmt.Printf("%-52s %10.0f records/s\n", "Go consumer loop (franz-go, sr.Serde, hamba, encoding/json)", bu.Median(rate[0]))
	fmt.Printf("%-52s %10.0f records/s\n", "cat log.jsonl, JSON text values", bu.Median(rate[2]))
	fmt.Printf("%-52s %10.0f records/s  %.2fx the loop (target >= 1.0x), %.2fx the text (target >= 0.5x)\n",
		"cat log.jsonl, Avro values decoded", bu.Median(rate[1]), bu.Median(ratioLoop), bu.Median(ratioText))
}

// produce writes the same orders to "avro" (wire format, schema id) and
// "json" (encoding/json text), and returns the value bytes of each.
func produce(addr string, id int) (avroBytes, jsonBytes int64) {
	cl, err := kgo.NewClient(kgo.SeedBrokers(addr), kgo.ProducerLinger(5*time.Millisecond), kgo.ProducerBatchMaxBytes(1<<20))
	if err != nil {
		bu.Die(err)
	}
	defer cl.Close()
	s := avro.MustParse(orderSchema)
	var serde sr.Serde
	serde.Register(id, order{}, sr.EncodeFn(func(v any) ([]byte, error) { return avro.Marshal(s, v) }))
	note := "leave at the door"
	ctx := context.Background()
	for i := range *records {
		o := order{ID: int64(i), Customer: fmt.Sprintf("customer-%06d", i%100000), Item: "widget \"deluxe\"",
			Qty: int32(i % 7), Price: float64(i%1000) / 8, Tags: []string{"a", "bb"}, TS: 1764410400000 + int64(i)}
		if i%3 == 0 {
			o.Note = &note
		}
		av, err := serde.Encode(o)
		if err != nil {
			bu.Die(err)
		}
		js, _ := json.Marshal(o)
		avroBytes, jsonBytes = avroBytes+int64(len(av)), jsonBytes+int64(len(js))
		cl.Produce(ctx, &kgo.Record{Topic: "avro", Value: av}, nil)
		cl.Produce(ctx, &kgo.Record{Topic: "json", Value: js}, nil)
	}
	if err := cl.Flush(ctx); err != nil {
		bu.Die(err)
	}
	return avroBytes, jsonBytes
}

// consumerLoop consumes "avro" from its start to its end as a Go program
// would: franz-go fetches, pkg/sr's Serde finds the schema by the ID
// (fetched from the registry once) and decodes with hamba/avro into
// map[string]any, encoding/json writes one object per line.
func consumerLoop(addr, registry string) time.Duration {
	start := time.Now()
	rcl, err := sr.NewClient(sr.URLs(registry))
	if err != nil {
		bu.Die(err)
	}
	cl, err := kgo.NewClient(kgo.SeedBrokers(addr), kgo.ConsumeTopics("avro"), kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()))
	if err != nil {
		bu.Die(err)
	}
	defer cl.Close()
	var serde sr.Serde
	out := bufio.NewWriterSize(io.Discard, 1<<20)
	ctx := context.Background()
	for n := 0; n < *records; {
		fs := cl.PollFetches(ctx)
		if err := fs.Err0(); err != nil {
			bu.Die(err)
		}
		for it := fs.RecordIter(); !it.Done(); {
			r := it.Next()
			id, _, err := serde.DecodeID(r.Value)
			if err != nil {
				bu.Die(err)
			}
			if !serde.IsRegistered(id, sr.DecodeFn) {
				s, err := rcl.SchemaByID(ctx, id)
				if err != nil {
					bu.Die(err)
				}
				as := avro.MustParse(s.Schema)
				serde.Register(id, map[string]any{}, sr.DecodeFn(func(b []byte, v any) error { return avro.Unmarshal(as, b, v) }),
					sr.GenerateFn(func() any { return &map[string]any{} }))
			}
			v, err := serde.DecodeNew(r.Value)
			if err != nil {
				bu.Die(err)
			}
			line, err := json.Marshal(map[string]any{"offset": r.Offset, "timestamp": r.Timestamp.UnixMilli(), "value": v, "value_schema_id": id})
			if err != nil {
				bu.Die(err)
			}
			out.Write(line)
			out.WriteByte('\n')
			n++
		}
	}
	_ = out.Flush()
	return time.Since(start)
}

// catCPU times `cat path`, and returns it with the processor time the
// daemon and this process (kfake serving the fetches) used meanwhile.
func catCPU(d *bu.Daemon, path string) (wall time.Duration, cpu string) {
	daemon, self := d.CPU(), bu.SelfCPU()
	wall = bu.Sh(fmt.Sprintf("cat %s > /dev/null", path))
	daemon, self = d.CPU()-daemon, bu.SelfCPU()-self
	return wall, fmt.Sprintf("%.2f s + %.2f s", daemon.Seconds(), self.Seconds())
}

// check verifies the mount decoded every record.
func check(mnt string) {
	if n := bu.ShInt(fmt.Sprintf("grep -c value_schema_id %s/avro/0/log.jsonl", mnt)); n != int64(*records) {
		bu.Die(fmt.Errorf("%d of %d records decoded", n, *records))
	}
}
