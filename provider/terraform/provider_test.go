package terraform

import (
	"github.com/hashicorp/terraform-plugin-framework/providerserver"
	"github.com/hashicorp/terraform-plugin-go/tfprotov6"
)

// testProviders serves the provider in-process to the real terraform binary.
var testProviders = map[string]func() (tfprotov6.ProviderServer, error){
	"flotilla": providerserver.NewProtocol6WithError(New("test")()),
}
