// Command validate decodes every object `helm template` rendered (YAML documents on stdin) into its
// Kubernetes API Go type, strictly: an unknown or misspelt field, a wrong type or a kind this chart
// does not make fails, naming the document. CI runs it on each values file's rendering.
package main

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"os"
	"strings"

	kedav1alpha1 "github.com/kedacore/keda/v2/apis/keda/v1alpha1"
	monitoringv1 "github.com/prometheus-operator/prometheus-operator/pkg/apis/monitoring/v1"
	appsv1 "k8s.io/api/apps/v1"
	autoscalingv2 "k8s.io/api/autoscaling/v2"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	policyv1 "k8s.io/api/policy/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/yaml"
)

// The kinds the chart renders, each with the Go type the API server decodes it into.
var kinds = map[string]func() any{
	"apps/v1/Deployment":                     func() any { return &appsv1.Deployment{} },
	"v1/Service":                             func() any { return &corev1.Service{} },
	"autoscaling/v2/HorizontalPodAutoscaler": func() any { return &autoscalingv2.HorizontalPodAutoscaler{} },
	"policy/v1/PodDisruptionBudget":          func() any { return &policyv1.PodDisruptionBudget{} },
	"batch/v1/Job":                           func() any { return &batchv1.Job{} },
	"networking.k8s.io/v1/NetworkPolicy":     func() any { return &networkingv1.NetworkPolicy{} },
	"monitoring.coreos.com/v1/ServiceMonitor": func() any { return &monitoringv1.ServiceMonitor{} },
	"keda.sh/v1alpha1/ScaledObject":          func() any { return &kedav1alpha1.ScaledObject{} },
}

func main() {
	input, err := io.ReadAll(bufio.NewReader(os.Stdin))
	if err != nil {
		fail("reading stdin: %v", err)
	}
	valid, problems := 0, 0
	for index, document := range bytes.Split(input, []byte("\n---")) {
		if len(bytes.TrimSpace(stripComments(document))) == 0 {
			continue
		}
		var meta metav1.TypeMeta
		if err := yaml.Unmarshal(document, &meta); err != nil {
			problems++
			fmt.Fprintf(os.Stderr, "document %d: not YAML: %v\n", index+1, err)
			continue
		}
		name := fmt.Sprintf("document %d (%s %s)", index+1, meta.APIVersion, meta.Kind)
		make, known := kinds[meta.APIVersion+"/"+meta.Kind]
		if !known {
			problems++
			fmt.Fprintf(os.Stderr, "%s: a kind the chart does not make\n", name)
			continue
		}
		if err := yaml.UnmarshalStrict(document, make()); err != nil {
			problems++
			fmt.Fprintf(os.Stderr, "%s: %v\n", name, err)
			continue
		}
		valid++
	}
	fmt.Printf("%d objects valid, %d invalid\n", valid, problems)
	if problems > 0 || valid == 0 {
		os.Exit(1)
	}
}

func stripComments(document []byte) []byte {
	var kept []string
	for _, line := range strings.Split(string(document), "\n") {
		if !strings.HasPrefix(strings.TrimSpace(line), "#") {
			kept = append(kept, line)
		}
	}
	return []byte(strings.Join(kept, "\n"))
}

func fail(format string, args ...any) {
	fmt.Fprintf(os.Stderr, format+"\n", args...)
	os.Exit(1)
}
