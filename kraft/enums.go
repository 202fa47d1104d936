package kraft

import "strconv"

// Kafka's enums as their Java names, by id (the values the records carry).

func enumName(names map[int]string, id int) string {
	if n, ok := names[id]; ok {
		return n
	}
	return "UNKNOWN(" + strconv.Itoa(id) + ")"
}

// ConfigResource.Type.
var configResourceTypes = map[int]string{0: "UNKNOWN", 2: "TOPIC", 4: "BROKER", 8: "BROKER_LOGGER", 16: "CLIENT_METRICS", 32: "GROUP"}

// ConfigTypeTopic is ConfigResource.Type.TOPIC's id.
const ConfigTypeTopic = 2

// ConfigResourceTypeName is ConfigResource.Type's name for id.
func ConfigResourceTypeName(id int8) string { return enumName(configResourceTypes, int(id)) }

// org.apache.kafka.common.resource.ResourceType.
var aclResourceTypes = map[int]string{0: "UNKNOWN", 1: "ANY", 2: "TOPIC", 3: "GROUP", 4: "CLUSTER", 5: "TRANSACTIONAL_ID", 6: "DELEGATION_TOKEN", 7: "USER"}

// PatternType.
var patternTypes = map[int]string{0: "UNKNOWN", 1: "ANY", 2: "MATCH", 3: "LITERAL", 4: "PREFIXED"}

// AclOperation.
var aclOperations = map[int]string{0: "UNKNOWN", 1: "ANY", 2: "ALL", 3: "READ", 4: "WRITE", 5: "CREATE", 6: "DELETE", 7: "ALTER",
	8: "DESCRIBE", 9: "CLUSTER_ACTION", 10: "DESCRIBE_CONFIGS", 11: "ALTER_CONFIGS", 12: "IDEMPOTENT_WRITE", 13: "CREATE_TOKENS",
	14: "DESCRIBE_TOKENS", 15: "TWO_PHASE_COMMIT"}

// AclPermissionType.
var permissionTypes = map[int]string{0: "UNKNOWN", 1: "ANY", 2: "DENY", 3: "ALLOW"}

// SecurityProtocol.
var securityProtocols = map[int]string{0: "PLAINTEXT", 1: "SSL", 2: "SASL_PLAINTEXT", 3: "SASL_SSL"}

// ScramMechanism, by its record type id.
var scramMechanisms = map[int]string{1: "SCRAM-SHA-256", 2: "SCRAM-SHA-512"}

// ZkMigrationState.
var zkMigrationStates = map[int]string{0: "NONE", 1: "MIGRATION", 2: "PRE_MIGRATION", 3: "POST_MIGRATION", 4: "ZK"}

// LeaderRecoveryState.
var leaderRecoveryStates = map[int]string{0: "RECOVERED", 1: "RECOVERING"}
