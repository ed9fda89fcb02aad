package main

import (
	"io"
	"net"
	"net/http"
	"strings"
	"testing"

	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
	"github.com/sirupsen/logrus"

	"github.com/partfs/partfs/metrics"
)

func TestMetricsOverHTTPParse(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	mets := metrics.New(nil)
	mets.Appended("orders", 0, 10, 2)
	stop := serveMetrics(ln, mets, logrus.NewEntry(logrus.New()))
	defer stop()

	resp, err := http.Get("http://" + ln.Addr().String() + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	parser := expfmt.NewTextParser(model.UTF8Validation)
	families, err := parser.TextToMetricFamilies(strings.NewReader(string(body)))
	if err != nil {
		t.Fatalf("parse: %v\n%s", err, body)
	}
	f := families["partfs_appended_records_total"]
	if f == nil || f.Metric[0].GetCounter().GetValue() != 2 {
		t.Fatalf("appended records missing or wrong in\n%s", body)
	}
}
