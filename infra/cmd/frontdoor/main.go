// Command frontdoor is the deploy step after `scf deploy` that gives the functions
// their front door on Tencent Cloud (see package frontdoor):
//
//	frontdoor urls  -stage prod [-domain api.example.cn -cert-id XXXX]
//	frontdoor apigw -service-id service-xxxxxxxx [-release]
//
// `urls` makes sure every function with HTTP routes in serverless.yml has a public
// Function URL (and, with -domain, the custom domain's path rules), then prints the
// base URLs and the settings that depend on them. `apigw` is for salons still on
// API Gateway: it switches integrated response on for every API, publishes to
// release, and prints each route's URL with the /release prefix. Both read before
// they write: running them again changes nothing.
//
// Keys come from TENCENTCLOUD_SECRET_ID / TENCENTCLOUD_SECRET_KEY (or the
// TENCENT_SECRET_ID / TENCENT_SECRET_KEY of the Serverless Framework's .env).
package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"os"
	"strings"
	"time"

	"salon/infra/frontdoor"
	"salon/infra/localgw"
)

func main() {
	if err := run(context.Background(), os.Args[1:], os.Getenv, os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, "frontdoor:", err)
		os.Exit(1)
	}
}

const usage = `usage:
  frontdoor urls  -stage STAGE [-domain DOMAIN -cert-id CERT] [-serverless serverless.yml]
  frontdoor apigw -service-id service-xxxxxxxx [-release] [-serverless serverless.yml]`

func run(ctx context.Context, args []string, getenv func(string) string, out io.Writer) error {
	if len(args) == 0 {
		return fmt.Errorf("a subcommand is required\n%s", usage)
	}
	cmd, args := args[0], args[1:]
	fs := flag.NewFlagSet("frontdoor "+cmd, flag.ContinueOnError)
	fs.SetOutput(out)
	var (
		file      = fs.String("serverless", "serverless.yml", "the serverless.yml that was deployed")
		region    = fs.String("region", "", "region (default: inputs.region of serverless.yml)")
		endpoint  = fs.String("endpoint", "", "cloud API endpoint override, e.g. http://127.0.0.1:PORT for a local fake")
		stage     = fs.String("stage", getenv("STAGE"), "the STAGE the functions were deployed with")
		namespace = fs.String("namespace", "default", "SCF namespace")
		qualifier = fs.String("qualifier", "$DEFAULT", "version or alias the URLs point at")
		domain    = fs.String("domain", "", "ICP-filed custom domain with path rules for every route (urls)")
		certID    = fs.String("cert-id", "", "SSL certificate id of -domain in Tencent's certificate service (urls)")
		serviceID = fs.String("service-id", "", "API Gateway service id (apigw)")
		release   = fs.Bool("release", false, "publish to release even when nothing changed (apigw; finishes an interrupted run)")
		timeout   = fs.Duration("timeout", 2*time.Minute, "bound for the whole step")
	)
	if err := fs.Parse(args); err != nil {
		return err
	}
	spec, err := localgw.LoadServerless(*file)
	if err != nil {
		return err
	}
	if *region == "" {
		*region = spec.Region
	}
	cred, err := frontdoor.CredentialsFromEnv(getenv)
	if err != nil {
		return err
	}
	cloud := frontdoor.NewCloud(cred, *region, *endpoint)
	ctx, cancel := context.WithTimeout(ctx, *timeout)
	defer cancel()

	switch cmd {
	case "urls":
		res, err := frontdoor.EnsureFunctionURLs(ctx, cloud, spec, frontdoor.URLConfig{
			Stage: *stage, Namespace: *namespace, Qualifier: *qualifier, Domain: *domain, CertificateID: *certID,
		})
		if err != nil {
			return err
		}
		printChanges(out, res.Changes)
		printURLs(out, spec, res, *domain)
	case "apigw":
		res, err := frontdoor.EnsureIntegratedResponse(ctx, cloud, *serviceID, spec, *release)
		if err != nil {
			return err
		}
		printChanges(out, res.Changes)
		fmt.Fprintf(out, "\nAPI Gateway %s, environment %s (the default domain needs the /%s prefix):\n", *serviceID, frontdoor.ReleaseEnvironment, frontdoor.ReleaseEnvironment)
		for _, a := range res.APIs {
			fmt.Fprintf(out, "  %-6s %s  -> %s\n", a.Method, a.URL, a.Function)
		}
		for _, m := range res.Missing {
			fmt.Fprintf(out, "  MISSING in the service: %s (deploy serverless.yml again)\n", m)
		}
		base := "https://" + res.Domain + "/" + frontdoor.ReleaseEnvironment
		fmt.Fprintf(out, "\nsettings:\n  WECHATPAY_NOTIFY_URL=%s/pay/notify\n  WECHATPAY_REFUND_NOTIFY_URL=%s/pay/refund-notify\n  mini-program request base: %s\n", base, base, base)
	default:
		return fmt.Errorf("unknown subcommand %q\n%s", cmd, usage)
	}
	return nil
}

func printChanges(out io.Writer, changes []string) {
	if len(changes) == 0 {
		fmt.Fprintln(out, "no change: everything was already in place")
		return
	}
	fmt.Fprintf(out, "%d change(s):\n", len(changes))
	for _, c := range changes {
		fmt.Fprintln(out, "  "+c)
	}
}

func printURLs(out io.Writer, spec *localgw.Spec, res *frontdoor.URLResult, domain string) {
	fmt.Fprintln(out, "\nFunction URLs (one host per function):")
	byKey := map[string]string{}
	for _, u := range res.URLs {
		byKey[u.Key] = u.URL
		fmt.Fprintf(out, "  %-10s %s  (%s)\n", u.Key, u.URL, u.Function)
	}
	fmt.Fprintln(out, "\nroutes:")
	for _, r := range spec.Routes {
		base := byKey[r.Function]
		if domain != "" {
			base = "https://" + domain
		}
		fmt.Fprintf(out, "  %-6s %s%s\n", r.Method, base, r.Path)
	}
	notify := byKey["paynotify"]
	if domain != "" {
		notify = "https://" + domain
		fmt.Fprintf(out, "\ncustom domain %s: %d path rules\n", domain, len(res.Rules))
		for _, r := range res.Rules {
			fmt.Fprintf(out, "  %-22s -> %s\n", r.PathMatch, r.Key)
		}
		if res.CNAME != "" {
			fmt.Fprintf(out, "DNS: %s CNAME %s\n", domain, res.CNAME)
		}
	} else {
		fmt.Fprintln(out, "\nWithout -domain each function has its own host: a mini-program must list all of them as request domains, and Function URL hosts are not ICP-filed domains of yours. Use -domain for production.")
	}
	if notify != "" {
		fmt.Fprintf(out, "\nsettings:\n  WECHATPAY_NOTIFY_URL=%s/pay/notify\n  WECHATPAY_REFUND_NOTIFY_URL=%s/pay/refund-notify\n", notify, notify)
	}
	if domain != "" {
		fmt.Fprintf(out, "  mini-program request domain: https://%s\n", strings.TrimSuffix(domain, "/"))
	}
}
