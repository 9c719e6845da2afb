// manifest-check reads Kubernetes manifests (the output of `helm template`)
// from the files named, or from stdin, and checks each document offline
// against the Go types the API server and the Prometheus Operator decode
// them into: its kind must be a known one, and it must decode strictly (no
// unknown or duplicate field, field names matched by case, every quantity,
// duration and int-or-string well formed). Then the checks the API server's
// validation would make that the types alone do not: names and labels, a
// DaemonSet's selector against its pod's labels, probes and mounts against
// the ports and volumes they name, requests under limits, each rule a record
// or an alert.
//
// Prints one line per object ("Kind namespace/name") and exits 0, or names
// each problem on stderr and exits 1.
package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"regexp"
	"strings"

	monitoringv1 "github.com/prometheus-operator/prometheus-operator/pkg/apis/monitoring/v1"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	metav1validation "k8s.io/apimachinery/pkg/apis/meta/v1/validation"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	sigsjson "sigs.k8s.io/json"
	"sigs.k8s.io/yaml"
)

// The Prometheus Operator's duration (its CRDs' pattern for interval and
// scrapeTimeout).
var durationPattern = regexp.MustCompile(
	`^(0|(([0-9]+)y)?(([0-9]+)w)?(([0-9]+)d)?(([0-9]+)h)?(([0-9]+)m)?(([0-9]+)s)?(([0-9]+)ms)?)$`)

func newScheme() *runtime.Scheme {
	s := runtime.NewScheme()
	for _, add := range []func(*runtime.Scheme) error{
		corev1.AddToScheme, appsv1.AddToScheme, rbacv1.AddToScheme, policyv1.AddToScheme,
		monitoringv1.AddToScheme,
	} {
		if err := add(s); err != nil {
			panic(err)
		}
	}
	return s
}

// problems collects what is wrong with one object.
type problems struct{ list []string }

func (p *problems) add(format string, args ...any) {
	p.list = append(p.list, fmt.Sprintf(format, args...))
}

func (p *problems) addAll(errs field.ErrorList) {
	for _, e := range errs {
		p.list = append(p.list, e.Error())
	}
}

// decode turns one YAML document into its typed object, strictly. A document
// of only comments gives nil.
func decode(s *runtime.Scheme, doc []byte) (runtime.Object, error) {
	data, err := yaml.YAMLToJSONStrict(doc)
	if err != nil {
		return nil, fmt.Errorf("not YAML (or a key given twice): %w", err)
	}
	if bytes.Equal(bytes.TrimSpace(data), []byte("null")) {
		return nil, nil
	}
	var tm metav1.TypeMeta
	if err := json.Unmarshal(data, &tm); err != nil {
		return nil, fmt.Errorf("not an object: %w", err)
	}
	if tm.APIVersion == "" || tm.Kind == "" {
		return nil, errors.New("no apiVersion or kind")
	}
	gvk := schema.FromAPIVersionAndKind(tm.APIVersion, tm.Kind)
	obj, err := s.New(gvk)
	if err != nil {
		return nil, fmt.Errorf("unknown kind %s %s", tm.APIVersion, tm.Kind)
	}
	strict, err := sigsjson.UnmarshalStrict(data, obj, sigsjson.DisallowUnknownFields)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", gvk.Kind, err)
	}
	if len(strict) > 0 {
		msgs := make([]string, len(strict))
		for i, e := range strict {
			msgs[i] = e.Error()
		}
		return nil, fmt.Errorf("%s: %s", gvk.Kind, strings.Join(msgs, "; "))
	}
	return obj, nil
}

func checkMeta(m *metav1.ObjectMeta, nameIsLabel bool, p *problems) {
	check := validation.IsDNS1123Subdomain
	if nameIsLabel {
		check = validation.IsDNS1035Label
	}
	for _, msg := range check(m.Name) {
		p.add("metadata.name %q: %s", m.Name, msg)
	}
	if m.Namespace != "" {
		for _, msg := range validation.IsDNS1123Label(m.Namespace) {
			p.add("metadata.namespace %q: %s", m.Namespace, msg)
		}
	}
	p.addAll(metav1validation.ValidateLabels(m.Labels, field.NewPath("metadata", "labels")))
	for key := range m.Annotations {
		for _, msg := range validation.IsQualifiedName(strings.ToLower(key)) {
			p.add("metadata.annotations %q: %s", key, msg)
		}
	}
}

func checkSelector(sel *metav1.LabelSelector, podLabels map[string]string, path string,
	p *problems) {
	if sel == nil {
		p.add("%s: missing", path)
		return
	}
	opts := metav1validation.LabelSelectorValidationOptions{}
	p.addAll(metav1validation.ValidateLabelSelector(sel, opts, field.NewPath(path)))
	selector, err := metav1.LabelSelectorAsSelector(sel)
	if err != nil {
		p.add("%s: %v", path, err)
		return
	}
	if selector.Empty() {
		p.add("%s: empty (it would select everything)", path)
	}
	if podLabels != nil && !selector.Matches(labels.Set(podLabels)) {
		p.add("%s %v does not select the pod's labels %v", path, sel.MatchLabels, podLabels)
	}
}

func checkPod(spec *corev1.PodSpec, p *problems) {
	volumes := map[string]bool{}
	for _, v := range spec.Volumes {
		if volumes[v.Name] {
			p.add("volume %q given twice", v.Name)
		}
		volumes[v.Name] = true
		for _, msg := range validation.IsDNS1123Label(v.Name) {
			p.add("volume %q: %s", v.Name, msg)
		}
		if v.HostPath != nil && !strings.HasPrefix(v.HostPath.Path, "/") {
			p.add("volume %q: hostPath %q is not absolute", v.Name, v.HostPath.Path)
		}
	}
	if len(spec.Containers) == 0 {
		p.add("no container")
	}
	for _, c := range spec.Containers {
		where := fmt.Sprintf("container %q", c.Name)
		for _, msg := range validation.IsDNS1123Label(c.Name) {
			p.add("%s: %s", where, msg)
		}
		if c.Image == "" {
			p.add("%s: no image", where)
		}
		ports := map[string]bool{}
		for _, port := range c.Ports {
			if port.Name != "" {
				for _, msg := range validation.IsValidPortName(port.Name) {
					p.add("%s: port %q: %s", where, port.Name, msg)
				}
				ports[port.Name] = true
			}
			for _, msg := range validation.IsValidPortNum(int(port.ContainerPort)) {
				p.add("%s: containerPort %d: %s", where, port.ContainerPort, msg)
			}
		}
		for name, probe := range map[string]*corev1.Probe{
			"livenessProbe": c.LivenessProbe, "readinessProbe": c.ReadinessProbe,
			"startupProbe": c.StartupProbe} {
			if probe == nil || probe.HTTPGet == nil {
				continue
			}
			port := probe.HTTPGet.Port
			if port.StrVal != "" && !ports[port.StrVal] {
				p.add("%s: %s names port %q, which the container does not declare", where, name,
					port.StrVal)
			}
		}
		for _, m := range c.VolumeMounts {
			if !volumes[m.Name] {
				p.add("%s: mount %q names no volume", where, m.Name)
			}
			if !strings.HasPrefix(m.MountPath, "/") {
				p.add("%s: mount %q at %q, not an absolute path", where, m.Name, m.MountPath)
			}
		}
		for _, e := range c.Env {
			for _, msg := range validation.IsEnvVarName(e.Name) {
				p.add("%s: env %q: %s", where, e.Name, msg)
			}
		}
		for name, limit := range c.Resources.Limits {
			if request, ok := c.Resources.Requests[name]; ok && request.Cmp(limit) > 0 {
				p.add("%s: %s request %s over its limit %s", where, name, request.String(),
					limit.String())
			}
		}
	}
}

func checkMonitorEndpoint(interval, timeout monitoringv1.Duration, port string, p *problems) {
	for name, d := range map[string]monitoringv1.Duration{
		"interval": interval, "scrapeTimeout": timeout} {
		if d != "" && !durationPattern.MatchString(string(d)) {
			p.add("%s %q is not a Prometheus duration", name, d)
		}
	}
	if port == "" {
		p.add("endpoint names no port")
	}
}

func check(obj runtime.Object, p *problems) (kind string, meta *metav1.ObjectMeta) {
	switch o := obj.(type) {
	case *appsv1.DaemonSet:
		checkMeta(&o.ObjectMeta, false, p)
		checkSelector(o.Spec.Selector, o.Spec.Template.Labels, "spec.selector", p)
		checkPod(&o.Spec.Template.Spec, p)
		return "DaemonSet", &o.ObjectMeta
	case *corev1.Service:
		checkMeta(&o.ObjectMeta, true, p)
		if len(o.Spec.Ports) == 0 {
			p.add("spec.ports: none")
		}
		for _, port := range o.Spec.Ports {
			for _, msg := range validation.IsValidPortNum(int(port.Port)) {
				p.add("port %q: %s", port.Name, msg)
			}
		}
		return "Service", &o.ObjectMeta
	case *corev1.ServiceAccount:
		checkMeta(&o.ObjectMeta, false, p)
		return "ServiceAccount", &o.ObjectMeta
	case *monitoringv1.ServiceMonitor:
		checkMeta(&o.ObjectMeta, false, p)
		checkSelector(&o.Spec.Selector, nil, "spec.selector", p)
		if len(o.Spec.Endpoints) == 0 {
			p.add("spec.endpoints: none")
		}
		for _, e := range o.Spec.Endpoints {
			checkMonitorEndpoint(e.Interval, e.ScrapeTimeout, e.Port, p)
		}
		return "ServiceMonitor", &o.ObjectMeta
	case *monitoringv1.PodMonitor:
		checkMeta(&o.ObjectMeta, false, p)
		checkSelector(&o.Spec.Selector, nil, "spec.selector", p)
		if len(o.Spec.PodMetricsEndpoints) == 0 {
			p.add("spec.podMetricsEndpoints: none")
		}
		for _, e := range o.Spec.PodMetricsEndpoints {
			port := ""
			if e.Port != nil {
				port = *e.Port
			}
			checkMonitorEndpoint(e.Interval, e.ScrapeTimeout, port, p)
		}
		return "PodMonitor", &o.ObjectMeta
	case *monitoringv1.PrometheusRule:
		checkMeta(&o.ObjectMeta, false, p)
		if len(o.Spec.Groups) == 0 {
			p.add("spec.groups: none")
		}
		for _, g := range o.Spec.Groups {
			if g.Name == "" {
				p.add("a rule group without a name")
			}
			for i, r := range g.Rules {
				if (r.Record == "") == (r.Alert == "") {
					p.add("group %q rule %d: needs exactly one of record and alert", g.Name, i)
				}
				if r.Expr.String() == "" {
					p.add("group %q rule %d: no expr", g.Name, i)
				}
			}
		}
		return "PrometheusRule", &o.ObjectMeta
	default:
		gvk := obj.GetObjectKind().GroupVersionKind()
		if accessor, ok := obj.(metav1.ObjectMetaAccessor); ok {
			m := accessor.GetObjectMeta().(*metav1.ObjectMeta)
			checkMeta(m, false, p)
			return gvk.Kind, m
		}
		return gvk.Kind, &metav1.ObjectMeta{}
	}
}

// checkStream checks every document of one stream; false if any is wrong.
func checkStream(s *runtime.Scheme, name string, r io.Reader) bool {
	ok := true
	reader := utilyaml.NewYAMLReader(bufio.NewReader(r))
	for n := 1; ; n++ {
		doc, err := reader.Read()
		if err == io.EOF {
			return ok
		}
		if err != nil {
			fmt.Fprintf(os.Stderr, "manifest-check: %s: document %d: %v\n", name, n, err)
			return false
		}
		obj, err := decode(s, doc)
		if err != nil {
			fmt.Fprintf(os.Stderr, "manifest-check: %s: document %d: %v\n", name, n, err)
			ok = false
			continue
		}
		if obj == nil {
			continue
		}
		var p problems
		kind, meta := check(obj, &p)
		for _, msg := range p.list {
			fmt.Fprintf(os.Stderr, "manifest-check: %s: document %d (%s %s): %s\n", name, n, kind,
				meta.Name, msg)
		}
		if len(p.list) > 0 {
			ok = false
			continue
		}
		fmt.Printf("%s %s/%s\n", kind, meta.Namespace, meta.Name)
	}
}

func main() {
	s := newScheme()
	ok := true
	if len(os.Args) < 2 {
		ok = checkStream(s, "stdin", os.Stdin)
	}
	for _, path := range os.Args[1:] {
		f, err := os.Open(path)
		if err != nil {
			fmt.Fprintf(os.Stderr, "manifest-check: %v\n", err)
			ok = false
			continue
		}
		ok = checkStream(s, path, f) && ok
		f.Close()
	}
	if !ok {
		os.Exit(1)
	}
}
