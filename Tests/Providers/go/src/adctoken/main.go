// adctoken prints what Go's Application Default Credentials find: the access token, the project and, from the
// metadata server, the account. Built offline from Debian's packages (GO111MODULE=off, GOPATH with
// /usr/share/gocode) by the tests.
package main

import (
	"context"
	"encoding/json"
	"fmt"
	"os"

	"cloud.google.com/go/compute/metadata"
	"golang.org/x/oauth2/google"
)

func main() {
	ctx := context.Background()
	creds, err := google.FindDefaultCredentials(ctx, "https://www.googleapis.com/auth/cloud-platform")
	if err != nil {
		fmt.Fprintln(os.Stderr, "FindDefaultCredentials:", err)
		os.Exit(1)
	}
	tok, err := creds.TokenSource.Token()
	if err != nil {
		fmt.Fprintln(os.Stderr, "Token:", err)
		os.Exit(1)
	}
	email, _ := metadata.Email("default")
	out, _ := json.Marshal(map[string]string{"token": tok.AccessToken, "project": creds.ProjectID, "email": email})
	fmt.Println(string(out))
}
