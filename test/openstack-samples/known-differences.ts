/**
 * Where the emulator's answer may legitimately differ in shape from the recorded one, and why.
 * Each entry names the sample and the comparison problems it excuses (matched as regular expressions).
 * Production-versus-test-cloud differences in values (VIP addresses, operating status, fully populated
 * children going ACTIVE) are not listed: values are not compared. docs/sim-openstack.md explains them.
 */
export const KNOWN_DIFFERENCES: Readonly<Record<string, { paths: RegExp[]; reason: string }>> = {
  'neutron_GET_v2.0_networks__pagination_limit1.json': {
    paths: [/^body\.networks\[0\]\.(provider:physical_network|provider:segmentation_id|is_default)\b/],
    reason:
      'Neutron pages by id and ids are random: the one network on the page may be the flat external network ' +
      '(physical network set, no segmentation id, is_default shown) or a tenant vxlan network, on either side.',
  },
};
