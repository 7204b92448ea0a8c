package tracing

import (
	"context"
	"fmt"
	"log/slog"
	"strconv"
	"strings"

	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracegrpc"
	"go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracehttp"
	"go.opentelemetry.io/otel/sdk/resource"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
)

// The environment variables Setup reads itself; the OTLP exporters read
// the rest of theirs (OTEL_EXPORTER_OTLP_HEADERS, _TIMEOUT, _INSECURE,
// _CERTIFICATE, _COMPRESSION, and the _TRACES_ forms of each), and the
// resource OTEL_RESOURCE_ATTRIBUTES.
const (
	envDisabled       = "OTEL_SDK_DISABLED"
	envExporter       = "OTEL_TRACES_EXPORTER"
	envEndpoint       = "OTEL_EXPORTER_OTLP_ENDPOINT"
	envTracesEndpoint = "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT"
	envProtocol       = "OTEL_EXPORTER_OTLP_PROTOCOL"
	envTracesProtocol = "OTEL_EXPORTER_OTLP_TRACES_PROTOCOL"
	envSampler        = "OTEL_TRACES_SAMPLER"
	envSamplerArg     = "OTEL_TRACES_SAMPLER_ARG"
	envServiceName    = "OTEL_SERVICE_NAME"
)

// Config is what Setup found in the environment.
type Config struct {
	// On is false when tracing stays off; Why says why, for the log.
	On  bool
	Why string
	// Protocol is grpc or http/protobuf.
	Protocol string
	Sampler  sdktrace.Sampler
}

// FromEnv reads the tracing configuration from getenv (os.LookupEnv).
// Tracing is on when an OTLP endpoint is named
// (OTEL_EXPORTER_OTLP_TRACES_ENDPOINT or OTEL_EXPORTER_OTLP_ENDPOINT) or
// OTEL_TRACES_EXPORTER is otlp (the exporter's default endpoint), and
// off when none is set, when OTEL_TRACES_EXPORTER is none or when
// OTEL_SDK_DISABLED is true. A value mcpx cannot honour (an exporter
// other than otlp, the http/json protocol, an unknown sampler or a ratio
// outside [0, 1]) is an error naming the variable.
func FromEnv(getenv func(string) (string, bool)) (Config, error) {
	get := func(k string) string {
		v, _ := getenv(k)
		return strings.TrimSpace(v)
	}
	if strings.EqualFold(get(envDisabled), "true") {
		return Config{Why: envDisabled + " is true"}, nil
	}
	switch exp := strings.ToLower(get(envExporter)); exp {
	case "none":
		return Config{Why: envExporter + " is none"}, nil
	case "":
		if get(envTracesEndpoint) == "" && get(envEndpoint) == "" {
			return Config{Why: "no OTLP endpoint is set (" + envEndpoint + ")"}, nil
		}
	case "otlp":
	default:
		return Config{}, fmt.Errorf("%s=%s: mcpx exports traces only over OTLP (otlp, or none)", envExporter, exp)
	}
	c := Config{On: true, Protocol: "http/protobuf"}
	key, proto := envTracesProtocol, get(envTracesProtocol)
	if proto == "" {
		key, proto = envProtocol, get(envProtocol)
	}
	switch proto {
	case "", "http/protobuf":
	case "grpc":
		c.Protocol = proto
	default:
		return Config{}, fmt.Errorf("%s=%s: want grpc or http/protobuf (http/json is not supported)", key, proto)
	}
	s, err := sampler(get(envSampler), get(envSamplerArg))
	if err != nil {
		return Config{}, err
	}
	c.Sampler = s
	return c, nil
}

// sampler is the sampler OTEL_TRACES_SAMPLER names, with its argument;
// parentbased_always_on when none is named (the specification's default).
// Read here, not left to the SDK, so that a wrong value stops mcpx with a
// message instead of being logged and replaced.
func sampler(name, arg string) (sdktrace.Sampler, error) {
	ratio := func() (float64, error) {
		if arg == "" {
			return 1, nil
		}
		r, err := strconv.ParseFloat(arg, 64)
		if err != nil || r < 0 || r > 1 {
			return 0, fmt.Errorf("%s=%s: want a ratio from 0 to 1 for the sampler %s", envSamplerArg, arg, name)
		}
		return r, nil
	}
	switch strings.ToLower(name) {
	case "", "parentbased_always_on":
		return sdktrace.ParentBased(sdktrace.AlwaysSample()), nil
	case "always_on":
		return sdktrace.AlwaysSample(), nil
	case "always_off":
		return sdktrace.NeverSample(), nil
	case "parentbased_always_off":
		return sdktrace.ParentBased(sdktrace.NeverSample()), nil
	case "traceidratio":
		r, err := ratio()
		if err != nil {
			return nil, err
		}
		return sdktrace.TraceIDRatioBased(r), nil
	case "parentbased_traceidratio":
		r, err := ratio()
		if err != nil {
			return nil, err
		}
		return sdktrace.ParentBased(sdktrace.TraceIDRatioBased(r)), nil
	}
	return nil, fmt.Errorf("%s=%s: want always_on, always_off, traceidratio or their parentbased_ forms", envSampler, name)
}

// Setup turns tracing on when the environment configures it (see
// [FromEnv]): an OTLP exporter, batched, under the resource of service
// mcpx (OTEL_SERVICE_NAME and OTEL_RESOURCE_ATTRIBUTES override it).
// shutdown flushes the spans still queued and stops the exporter, within
// ctx; mcpx calls it on exit. With tracing off, shutdown does nothing.
func Setup(ctx context.Context, getenv func(string) (string, bool), version string, log *slog.Logger) (shutdown func(context.Context) error, err error) {
	c, err := FromEnv(getenv)
	if err != nil {
		return nil, err
	}
	if !c.On {
		log.Debug("tracing is off", "why", c.Why)
		return func(context.Context) error { return nil }, nil
	}
	var exp sdktrace.SpanExporter
	if c.Protocol == "grpc" {
		exp, err = otlptracegrpc.New(ctx)
	} else {
		exp, err = otlptracehttp.New(ctx)
	}
	if err != nil {
		return nil, fmt.Errorf("the OTLP trace exporter: %w", err)
	}
	res, err := resource.New(ctx,
		resource.WithAttributes(attribute.String("service.name", "mcpx"), attribute.String("service.version", version)),
		resource.WithTelemetrySDK(),
		resource.WithFromEnv(), // last: OTEL_SERVICE_NAME wins over "mcpx"
	)
	if err != nil {
		exp.Shutdown(ctx)
		return nil, fmt.Errorf("the trace resource (%s, OTEL_RESOURCE_ATTRIBUTES): %w", envServiceName, err)
	}
	// The SDK reports failed exports here; they go to mcpx's log, not to
	// the SDK's default logger on stderr.
	otel.SetErrorHandler(otel.ErrorHandlerFunc(func(err error) { log.Warn("tracing", "err", err) }))
	tp := sdktrace.NewTracerProvider(sdktrace.WithBatcher(exp), sdktrace.WithSampler(c.Sampler), sdktrace.WithResource(res))
	restore := Install(tp)
	log.Info("tracing to OTLP", "protocol", c.Protocol, "sampler", c.Sampler.Description())
	return func(ctx context.Context) error {
		restore()
		return tp.Shutdown(ctx)
	}, nil
}
