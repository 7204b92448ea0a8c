package edge_test

import (
	"context"
	"slices"
	"testing"
)

// TestSubscribeFollowedElsewhere: a shared session's resources/subscribe
// of a URI its transport says another replica follows is answered
// without the namespace following it here; another URI is followed, and
// Following lists it alone.
func TestSubscribeFollowedElsewhere(t *testing.T) {
	ns := &subscriberNS{updates: make(chan string), refs: map[string]int{}}
	c := newClient(t)
	c.e.Server.NS = ns
	c.initialize("2025-11-25")
	t.Cleanup(c.sess.End) // its subscriptions' release ends with it
	c.sess.FollowedElsewhere(func(uri string) bool { return uri == "test://elsewhere" })
	result(t, c.do("resources/subscribe", `{"uri":"test://elsewhere"}`))
	result(t, c.do("resources/subscribe", `{"uri":"test://here"}`))
	if n := ns.ref("test://elsewhere"); n != 0 {
		t.Errorf("a URI another replica follows was followed here %d times", n)
	}
	if n := ns.ref("test://here"); n != 1 {
		t.Errorf("test://here followed %d times, want once", n)
	}
	if got := c.sess.Following(); !slices.Equal(got, []string{"test://here"}) {
		t.Errorf("Following() = %q, want [test://here]", got)
	}
}

// TestFollowTakesOver: Follow makes the session follow a URI without a
// request (a subscription taken over from a replica gone), whatever
// FollowedElsewhere says, once however often; Unfollow lets go of it.
func TestFollowTakesOver(t *testing.T) {
	ns := &subscriberNS{updates: make(chan string), refs: map[string]int{}}
	c := newClient(t)
	c.e.Server.NS = ns
	c.initialize("2025-11-25")
	t.Cleanup(c.sess.End) // its subscriptions' release ends with it
	c.sess.FollowedElsewhere(func(string) bool { return true })
	for range 2 {
		if err := c.e.Follow(context.Background(), c.sess, "test://a"); err != nil {
			t.Fatal(err)
		}
	}
	if n := ns.ref("test://a"); n != 1 || !c.sess.FollowsURI("test://a") {
		t.Fatalf("after Follow: followed %d times (FollowsURI %v), want once", n, c.sess.FollowsURI("test://a"))
	}
	if !c.e.Unfollow(c.sess, "test://a") || ns.ref("test://a") != 0 || c.sess.FollowsURI("test://a") {
		t.Fatalf("after Unfollow: followed %d times", ns.ref("test://a"))
	}
}
