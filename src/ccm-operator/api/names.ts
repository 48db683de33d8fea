/** The names upstream's operator (CCCMO) uses for the objects it reads and writes. */

/** The one object of each OpenShift config kind (Infrastructure, Proxy, FeatureGate, KubeControllerManager). */
export const CLUSTER = 'cluster';
/** The ClusterOperator this operator reports on. */
export const CLUSTER_OPERATOR_NAME = 'cloud-controller-manager';
/** Where the operator runs (its images ConfigMap and Lease live there). */
export const OPERATOR_NAMESPACE = 'openshift-cloud-controller-manager-operator';
/** Where the operands run (`--namespace`). */
export const MANAGED_NAMESPACE = 'openshift-cloud-controller-manager';
/** Where the user's cloud config and the Proxy's CA ConfigMap are. */
export const OPENSHIFT_CONFIG_NAMESPACE = 'openshift-config';
/** Where OpenShift's cloud credential operator writes the legacy config it transformed (AWS, Azure). */
export const OPENSHIFT_CONFIG_MANAGED_NAMESPACE = 'openshift-config-managed';
export const MANAGED_CLOUD_CONFIG_NAME = 'kube-cloud-config';

/** The synced cloud config the CCMs mount, and its key. */
export const CLOUD_CONF_NAME = 'cloud-conf';
export const CLOUD_CONF_KEY = 'cloud.conf';
/** The key of the user's cloud-config ConfigMap where the installer puts the cloud's CA bundle. */
export const CLOUD_CONFIG_CA_KEY = 'ca-bundle.pem';

/** The merged trust bundle the CCMs mount over the system trust path, and its key. */
export const TRUSTED_CA_NAME = 'ccm-trusted-ca';
export const TRUSTED_CA_KEY = 'ca-bundle.crt';
/** The key of the Proxy's trustedCA ConfigMap. */
export const PROXY_CA_KEY = 'ca-bundle.crt';
/** The system trust bundle (RHEL's path, which upstream reads). */
export const SYSTEM_TRUST_BUNDLE = '/etc/pki/ca-trust/extracted/pem/tls-ca-bundle.pem';

/** The operands' images (upstream's ConfigMap in the operator's namespace), and its key. */
export const IMAGES_CONFIGMAP = 'cloud-controller-manager-images';
export const IMAGES_KEY = 'images.json';
/** Where upstream's Deployment mounts that ConfigMap (`--images-json`). */
export const IMAGES_FILE = '/etc/cloud-controller-manager-config/images.json';

/** The version entry an operator reports for itself. */
export const OPERATOR_VERSION = 'operator';
