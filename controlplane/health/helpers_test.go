package health_test

import "github.com/flotilla-io/terraform-provider-flotilla/controlplane/api/apitest"

// The object builders are shared with the other pure packages' tests.
type objWrapper = apitest.ObjWrapper

var (
	makeObj        = apitest.MakeObj
	makeDeployment = apitest.MakeLiveDeployment
	jsonValue      = apitest.JSONValue
)
