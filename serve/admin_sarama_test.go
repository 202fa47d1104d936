package serve

import (
	"testing"

	"github.com/IBM/sarama"
)

// TestAdminSarama: sarama's ClusterAdmin lists topics (its ListTopics
// asks DescribeConfigs of every topic), creates and deletes one, lists
// and describes groups and describes the cluster.
func TestAdminSarama(t *testing.T) {
	dir := fixtureLogDir(t, "multi-0", "multi-1", "multi-2")
	_, addr := startServer(t, Config{LogDir: dir, Writable: true})
	member := stableMember(t, addr, "sg", "multi")
	defer member.Close()
	cfg := sarama.NewConfig()
	cfg.Version = sarama.V3_6_0_0
	adm, err := sarama.NewClusterAdmin([]string{addr}, cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer adm.Close()
	topics, err := adm.ListTopics()
	if err != nil {
		t.Fatal(err)
	}
	// ListTopics keeps the configs that are not defaults: none here.
	if d, ok := topics["multi"]; !ok || d.NumPartitions != 3 || len(d.ConfigEntries) != 0 {
		t.Errorf("ListTopics: %+v", topics)
	}
	if err := adm.CreateTopic("made", &sarama.TopicDetail{NumPartitions: 2, ReplicationFactor: 1}, false); err != nil {
		t.Fatal(err)
	}
	if err := adm.CreateTopic("made", &sarama.TopicDetail{NumPartitions: 2, ReplicationFactor: 1}, false); err == nil {
		t.Error("created twice")
	}
	if err := adm.CreatePartitions("made", 3, nil, false); err != nil {
		t.Fatal(err)
	}
	md, err := adm.DescribeTopics([]string{"made"})
	if err != nil || len(md) != 1 || len(md[0].Partitions) != 3 {
		t.Fatalf("DescribeTopics: %v %+v", err, md)
	}
	if err := adm.DeleteTopic("made"); err != nil {
		t.Fatal(err)
	}
	groups, err := adm.ListConsumerGroups()
	if err != nil || groups["sg"] != "consumer" {
		t.Errorf("ListConsumerGroups: %v %v", groups, err)
	}
	gd, err := adm.DescribeConsumerGroups([]string{"sg"})
	if err != nil || len(gd) != 1 || gd[0].State != "Stable" || len(gd[0].Members) != 1 {
		t.Errorf("DescribeConsumerGroups: %v %+v", err, gd)
	}
	brokers, controller, err := adm.DescribeCluster()
	if err != nil || len(brokers) != 1 || controller != 0 {
		t.Errorf("DescribeCluster: %v %v %v", brokers, controller, err)
	}
}
